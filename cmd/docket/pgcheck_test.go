package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// startWorker runs `docket worker` with vars until it logs that it started
// (and returns its log and a stop function), or until it returns (an error
// the test reports).
func startWorker(t *testing.T, vars map[string]string) (log *syncBuffer, stop func(), runErr error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log = &syncBuffer{}
	var stdout syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"worker"}, env(vars), &stdout, log) }()
	deadline := time.After(30 * time.Second)
	for !strings.Contains(log.String(), "worker started") {
		select {
		case err := <-done:
			cancel()
			return log, func() {}, err
		case <-deadline:
			cancel()
			t.Fatalf("no worker start within 30 s:\n%s", log.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return log, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	}, nil
}

// Test 16's negative control: on a database where the worker's role runs
// with synchronous_commit off (ALTER ROLE ... SET, here for this database
// only), docket worker refuses to start, before it migrates anything;
// with --allow-async-commit (DOCKET_ALLOW_ASYNC_COMMIT) it starts and logs
// an error.
func TestWorker_RefusesAsyncCommit(t *testing.T) {
	t.Parallel()
	db := newPGDatabase(t)
	ctx := context.Background()
	var role, dbname string
	if err := db.conn.QueryRow(ctx, `SELECT current_user, current_database()`).Scan(&role, &dbname); err != nil {
		t.Fatal(err)
	}
	alter := `ALTER ROLE ` + pgx.Identifier{role}.Sanitize() + ` IN DATABASE ` + pgx.Identifier{dbname}.Sanitize() +
		` SET synchronous_commit = off` // dropped with the database
	if _, err := db.conn.Exec(ctx, alter); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"DATABASE_URL": db.url, "DOCKET_DATA_DIR": t.TempDir()}

	log, _, err := startWorker(t, vars)
	if err == nil {
		t.Fatalf("the worker started with synchronous_commit off:\n%s", log.String())
	}
	for _, want := range []string{"synchronous_commit is off", "ALTER ROLE", "--allow-async-commit"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	var migrated bool
	if err := db.conn.QueryRow(ctx, `SELECT to_regclass('docket_migrations') IS NOT NULL`).Scan(&migrated); err != nil || migrated {
		t.Errorf("the refused worker migrated the database (%v)", err)
	}

	vars["DOCKET_ALLOW_ASYNC_COMMIT"] = "true"
	log, stop, err := startWorker(t, vars)
	if err != nil {
		t.Fatalf("with DOCKET_ALLOW_ASYNC_COMMIT: %v\n%s", err, log.String())
	}
	stop()
	if !strings.Contains(log.String(), `level=ERROR msg="ACKNOWLEDGED JOBS MAY BE LOST: started with --allow-async-commit" err="synchronous_commit is off`) {
		t.Errorf("no error logged for synchronous_commit off:\n%s", log.String())
	}
}

// Test 19's start-up validation: a worker whose pool and LISTEN connection
// do not fit in the slots left for its role (here a pool of 250 on a
// server of 200 connections) says so, with the numbers, and starts. Not
// parallel: the check counts every Docket process's sessions on the
// server, and another test's worker in this test process would be one.
func TestWorker_WarnsConnectionBudget(t *testing.T) {
	db := newPGDatabase(t)
	waitNoDocketSessions(t, db.conn)
	sep := "?"
	if strings.Contains(db.url, "?") {
		sep = "&"
	}
	vars := map[string]string{"DATABASE_URL": db.url + sep + "pool_max_conns=250", "DOCKET_DATA_DIR": t.TempDir()}
	log, stop, err := startWorker(t, vars)
	if err != nil {
		t.Fatalf("worker: %v\n%s", err, log.String())
	}
	stop()
	if !strings.Contains(log.String(), `level=WARN msg="connection budget: 1 process × (pool 250 + 1) = 251 connections > `) ||
		!strings.Contains(log.String(), "processes=1 want=251 slots=") || !strings.Contains(log.String(), "max_connections=200") {
		t.Errorf("no connection-budget warning:\n%s", log.String())
	}

	// The default pool fits.
	log, stop, err = startWorker(t, map[string]string{"DATABASE_URL": db.url, "DOCKET_DATA_DIR": t.TempDir()})
	if err != nil {
		t.Fatalf("worker: %v\n%s", err, log.String())
	}
	stop()
	if strings.Contains(log.String(), "connection budget") {
		t.Errorf("a warning for the default pool on 200 connections:\n%s", log.String())
	}
}

// Test 19's start-up validation across processes: a worker whose pool fits
// alone, beside two other Docket processes (sessions named as ProcessName
// names them) with pools as large, warns that the three do not fit:
// processes × (pool + 1) against the slots left plus those the others hold.
// Not parallel, as TestWorker_WarnsConnectionBudget.
func TestWorker_WarnsFleetConnectionBudget(t *testing.T) {
	db := newPGDatabase(t)
	waitNoDocketSessions(t, db.conn)
	connString := db.conn.Config().ConnString()
	for _, name := range []string{"docket worker otherhost:101 pool=80", "docket serve otherhost:102 pool=80"} {
		cfg, err := pgx.ParseConfig(connString)
		if err != nil {
			t.Fatal(err)
		}
		cfg.RuntimeParams["application_name"] = name
		conn, err := pgx.ConnectConfig(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close(context.Background()) })
	}
	sep := "?"
	if strings.Contains(db.url, "?") {
		sep = "&"
	}
	vars := map[string]string{"DATABASE_URL": db.url + sep + "pool_max_conns=80", "DOCKET_DATA_DIR": t.TempDir()}
	log, stop, err := startWorker(t, vars)
	if err != nil {
		t.Fatalf("worker: %v\n%s", err, log.String())
	}
	stop()
	if !strings.Contains(log.String(), `level=WARN msg="connection budget: 3 processes × (pool 80 + 1) = 243 connections > `) ||
		!strings.Contains(log.String(), "processes=3 want=243 slots=") || !strings.Contains(log.String(), "this_process_want=81 free=") {
		t.Errorf("no connection-budget warning for three processes:\n%s", log.String())
	}
}

// waitNoDocketSessions waits until the server shows no session of a Docket
// process (an earlier test's, ending).
func waitNoDocketSessions(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'docket %'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions of Docket processes still open after 10 s", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
