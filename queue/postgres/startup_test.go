package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// startupDB is a fresh database, a superuser pool on it, and a role of
// its own (LOGIN, not a superuser, with the given extra clauses) that
// setup drops at the end.
type startupDB struct {
	connString string
	admin      *pgxpool.Pool
	role       string
}

func newStartupDB(t *testing.T, roleClauses string) startupDB {
	t.Helper()
	connString := pgtest.NewDatabase(t)
	admin := openPool(t, connString, 0)
	dbname := admin.Config().ConnConfig.Database
	role := "docket_startup_" + strings.TrimPrefix(dbname, "docket_test_")
	exec(t, admin, `CREATE ROLE `+pgx.Identifier{role}.Sanitize()+` LOGIN NOSUPERUSER `+roleClauses)
	t.Cleanup(func() {
		// After every pool of the test has closed (cleanups run last first).
		_, _ = admin.Exec(context.Background(), `DROP ROLE IF EXISTS `+pgx.Identifier{role}.Sanitize())
	})
	return startupDB{connString: connString, admin: admin, role: role}
}

// openPool opens a pool on connString (as role, when not empty) with at
// most maxConns connections (0: pgx's default).
func openPool(t *testing.T, connString string, maxConns int32, role ...string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		t.Fatal(err)
	}
	if len(role) > 0 {
		cfg.ConnConfig.User = role[0]
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func exec(t *testing.T, pool *pgxpool.Pool, sql string) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// CheckSyncCommit reads the setting as the session sees it: the role's
// setting (ALTER ROLE ... SET) overrides the database's, and only off is
// refused (local still flushes the commit locally before it answers).
func TestCheckSyncCommit(t *testing.T) {
	t.Parallel()
	db := newStartupDB(t, "")
	dbname := db.admin.Config().ConnConfig.Database
	// The test cluster runs with synchronous_commit off (for speed); the
	// database says on, the role off.
	exec(t, db.admin, `ALTER DATABASE `+pgx.Identifier{dbname}.Sanitize()+` SET synchronous_commit = on`)
	exec(t, db.admin, `ALTER ROLE `+pgx.Identifier{db.role}.Sanitize()+` SET synchronous_commit = off`)

	err := postgres.CheckSyncCommit(t.Context(), openPool(t, db.connString, 0, db.role))
	if !errors.Is(err, postgres.ErrAsyncCommit) {
		t.Fatalf("role with synchronous_commit = off: %v, want ErrAsyncCommit", err)
	}
	if want := `ALTER ROLE "` + db.role + `" SET synchronous_commit = on`; !strings.Contains(err.Error(), want) {
		t.Errorf("the error does not say %q: %v", want, err)
	}
	if err := postgres.CheckSyncCommit(t.Context(), openPool(t, db.connString, 0)); err != nil {
		t.Errorf("superuser on the database that says on: %v", err)
	}
	for _, setting := range []string{"local", "remote_write", "on"} {
		if err := postgres.CheckSyncCommit(t.Context(), openPool(t, db.connString+" synchronous_commit="+setting, 0, db.role)); err != nil {
			t.Errorf("synchronous_commit = %s on the connection: %v, want nil", setting, err)
		}
	}
}

// ReadConnBudget counts what is left for the role: its CONNECTION LIMIT
// less its sessions open, and max_connections less the reserved slots and
// every client session open (another role's included, which a role without
// pg_read_all_stats sees without its backend_type).
func TestReadConnBudget(t *testing.T) {
	t.Parallel()
	db := newStartupDB(t, "CONNECTION LIMIT 4")
	held := openPool(t, db.connString, 0, db.role) // one session of the role, held
	if err := held.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := db.admin.Ping(t.Context()); err != nil { // and one of the superuser
		t.Fatal(err)
	}

	// Pool 2 and its LISTEN connection fit in the 3 left for the role.
	b, err := readBudget(t, db.connString, 2, db.role)
	if err != nil {
		t.Fatal(err)
	}
	if b.Want != 3 || b.RoleLimit != 4 || b.RoleOpen != 1 || b.Free != 3 || !b.Fits() {
		t.Errorf("pool 2 of a role limited to 4 with 1 open: %+v; want Want 3, RoleOpen 1, Free 3, Fits", b)
	}
	if b.MaxConnections != 200 || b.Reserved != 3 || b.Open < 2 {
		t.Errorf("server: %+v; want max_connections 200, 3 reserved, at least the 2 sessions held open", b)
	}
	// Pool 4 does not. (The last pool's session may not have ended yet.)
	if b, err = readBudget(t, db.connString, 4, db.role); err != nil || b.Want != 5 || b.Free != b.RoleLimit-b.RoleOpen || b.Fits() {
		t.Errorf("pool 4 + LISTEN in the 3 left: %+v, %v; want Want 5, Free = RoleLimit - RoleOpen, not Fits", b, err)
	}

	// A superuser has no reserved slots and no role limit; a pool larger
	// than the server's max_connections cannot fit.
	b, err = readBudget(t, db.connString, 250)
	if err != nil {
		t.Fatal(err)
	}
	if b.Reserved != 0 || b.RoleLimit != -1 || b.Free != b.MaxConnections-b.Open || b.Fits() {
		t.Errorf("superuser, pool 250: %+v; want Reserved 0, RoleLimit -1, Free = max_connections - open, not Fits", b)
	}
}

// readBudget reads the budget of a fresh pool, which it closes.
func readBudget(t *testing.T, connString string, maxConns int32, role ...string) (postgres.ConnBudget, error) {
	t.Helper()
	pool := openPool(t, connString, maxConns, role...)
	defer pool.Close()
	b, err := postgres.ReadConnBudget(t.Context(), pool)
	t.Logf("pool %d %v: %+v", maxConns, role, b)
	return b, err
}

// OpenWaiting's pool hands idle connections back after IdleConnTimeout,
// unless the URL sets its own.
func TestOpenWaiting_IdleConnTimeout(t *testing.T) {
	t.Parallel()
	connString := pgtest.NewDatabase(t)
	for _, tc := range []struct {
		connString string
		want       time.Duration
	}{
		{connString, postgres.IdleConnTimeout},
		{connString + " pool_max_conn_idle_time=5m", 5 * time.Minute},
	} {
		d, err := postgres.OpenWaiting(t.Context(), tc.connString, "test", nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg := d.Pool().Config()
		_ = d.Close()
		if cfg.MaxConnIdleTime != tc.want || cfg.MinConns != 0 {
			t.Errorf("%q: MaxConnIdleTime %s, MinConns %d; want %s and 0", tc.connString, cfg.MaxConnIdleTime, cfg.MinConns, tc.want)
		}
	}
}

// OpenWaiting names its sessions after the process (ProcessName) unless the
// connection string names them.
func TestOpenWaiting_ProcessName(t *testing.T) {
	t.Parallel()
	connString := pgtest.NewDatabase(t)
	for _, tc := range []struct {
		connString string
		want       string
	}{
		{connString + " pool_max_conns=3", postgres.ProcessName("worker", 3)},
		{connString + " application_name=mine", "mine"},
	} {
		d, err := postgres.OpenWaiting(t.Context(), tc.connString, "worker", nil)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		err = d.Pool().QueryRow(t.Context(), `SELECT current_setting('application_name')`).Scan(&got)
		_ = d.Close()
		if err != nil || got != tc.want {
			t.Errorf("%q: application_name %q, %v; want %q", tc.connString, got, err, tc.want)
		}
	}
}

// A process name fits in the 63 bytes PostgreSQL keeps, cutting the host,
// and gives its pool back.
func TestProcessName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		host string
		want string
	}{
		{"box", "docket worker box:4242 pool=12"},
		{strings.Repeat("h", 80), "docket worker " + strings.Repeat("h", 63-len("docket worker :4242 pool=12")) + ":4242 pool=12"},
	} {
		got := postgres.ProcessNameOf("worker", tc.host, 4242, 12)
		if got != tc.want || len(got) > 63 {
			t.Errorf("host %q: %q, want %q", tc.host, got, tc.want)
		}
		if pool, ok := postgres.ProcessPool(got); !ok || pool != 12 {
			t.Errorf("pool of %q: %d, %v; want 12", got, pool, ok)
		}
	}
	for _, name := range []string{"psql", "docket worker box:1", "docket worker box:1 pool=x", "chaos-12 pool=3"} {
		if pool, ok := postgres.ProcessPool(name); ok {
			t.Errorf("pool of %q: %d, want none", name, pool)
		}
	}
}

// ReadConnBudget counts the other live Docket processes by their sessions'
// names, with their pools, and warns when processes × (pool + 1) exceed
// the slots left for them all, though this process alone fits: on the
// role's side (CONNECTION LIMIT), counting the role's processes only, and
// on the server's. Not parallel: the server's side counts every Docket
// session on the server, and a parallel test's OpenWaiting opens some.
func TestReadConnBudget_Processes(t *testing.T) {
	db := newStartupDB(t, "CONNECTION LIMIT 10")
	// Another process of the role, pool 3, holding 2 sessions; one of
	// another role (the superuser) whose name does not say its pool,
	// holding 1; a session of the role that is no Docket process's.
	hold(t, db.connString, "docket worker hosta:1 pool=3", 2, db.role)
	hold(t, db.connString, "docket serve hostb:2", 1)
	hold(t, db.connString, "psql", 1, db.role)

	// The role's side: 10 - 3 open + 2 held by the other process = 9 slots
	// for two processes of the role.
	b, err := readNamedBudget(t, db.connString, "docket worker hostc:3 pool=2", 2, db.role)
	if err != nil {
		t.Fatal(err)
	}
	if b.RoleOpen != 3 || !b.Fits() || !b.FleetFits() || b.Warning() != "" {
		t.Errorf("pool 2 beside pool 3 in a role limit of 10: %+v; want RoleOpen 3, fits, no warning", b)
	}
	b, err = readNamedBudget(t, db.connString, "docket worker hostc:3 pool=5", 5, db.role)
	if err != nil {
		t.Fatal(err)
	}
	if want := "2 processes' pools + 1 each = 10 connections > 9 slots"; !b.Fits() || b.FleetFits() || b.Warning() != want ||
		b.Processes != 2 || b.OtherSessions != 2 {
		t.Errorf("pool 5 beside pool 3 in a role limit of 10: %+v, %q; want it to fit alone, and %q", b, b.Warning(), want)
	}
	b, err = readNamedBudget(t, db.connString, "docket worker hostc:3 pool=3", 3, db.role)
	if err != nil {
		t.Fatal(err)
	}
	if want := "2 processes × (pool 3 + 1) = 8 connections > 9 slots"; b.Warning() != "" || b.ProcessWant != 8 {
		t.Errorf("pool 3 beside pool 3 in a role limit of 10: %+v, %q; want 8 of 9, no warning (else %q)", b, b.Warning(), want)
	}

	// The server's side: a superuser (no reserved slots, no role limit)
	// with a pool of 100 beside the two processes, the second of which is
	// taken to want this pool too: 101 + 4 + 101.
	b, err = readNamedBudget(t, db.connString, "docket worker hostc:3 pool=100", 100)
	if err != nil {
		t.Fatal(err)
	}
	slots := b.MaxConnections - b.Open + 3
	if want := fmt.Sprintf("3 processes' pools + 1 each = 206 connections > %d slots", slots); !b.Fits() || b.Warning() != want {
		t.Errorf("superuser pool 100 beside two processes: %+v, %q; want it to fit alone, and %q", b, b.Warning(), want)
	}
}

// hold opens n sessions named name (as role, when given) until the test
// ends.
func hold(t *testing.T, connString, name string, n int32, role ...string) {
	t.Helper()
	pool := openPool(t, connString+" application_name='"+name+"'", n, role...)
	for range n {
		c, err := pool.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Release)
	}
}

// readNamedBudget reads the budget of a fresh pool of maxConns named name,
// which it closes.
func readNamedBudget(t *testing.T, connString, name string, maxConns int32, role ...string) (postgres.ConnBudget, error) {
	t.Helper()
	b, err := readBudget(t, connString+" application_name='"+name+"'", maxConns, role...)
	// A closed connection's backend exits after the client has gone: wait
	// for it, or the next reading counts this one as another process.
	conn, cerr := pgx.Connect(t.Context(), connString)
	if cerr != nil {
		t.Fatal(cerr)
	}
	defer conn.Close(context.Background())
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var n int
		if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions named %q still open 10 s after their pool closed", n, name)
		}
	}
	return b, err
}
