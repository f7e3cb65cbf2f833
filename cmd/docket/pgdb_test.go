package main

import (
	"context"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgDatabase is a fresh, empty PostgreSQL database for one test: the URL
// the docket command takes and a connection for the test's own queries.
type pgDatabase struct {
	url  string
	conn *pgx.Conn
}

func newPGDatabase(t *testing.T) pgDatabase {
	t.Helper()
	if cluster == nil {
		t.Skip("no PostgreSQL with -short")
	}
	connString := cluster.NewEmptyDatabase(t)
	conn, err := pgx.Connect(context.Background(), connString)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	// The test cluster runs with synchronous_commit off, for speed, which
	// serve and worker refuse (checkPostgres): the database says on.
	dbname := pgx.Identifier{conn.Config().Database}.Sanitize()
	if _, err := conn.Exec(context.Background(), `ALTER DATABASE `+dbname+` SET synchronous_commit = on`); err != nil {
		t.Fatal(err)
	}
	return pgDatabase{url: databaseURL(connString), conn: conn}
}

// databaseURL turns testpg's keyword/value connection string into the
// postgres:// URL that --database-url takes.
func databaseURL(connString string) string {
	if strings.HasPrefix(connString, "postgres://") || strings.HasPrefix(connString, "postgresql://") {
		return connString
	}
	kv := map[string]string{}
	for _, f := range strings.Fields(connString) {
		k, v, _ := strings.Cut(f, "=")
		kv[k] = v
	}
	q := url.Values{}
	for _, k := range []string{"host", "port", "sslmode"} {
		if kv[k] != "" {
			q.Set(k, kv[k])
		}
	}
	u := url.URL{Scheme: "postgres", User: url.User(kv["user"]), Path: "/" + kv["dbname"], RawQuery: q.Encode()}
	if pw, ok := kv["password"]; ok {
		u.User = url.UserPassword(kv["user"], pw)
	}
	return u.String()
}

// workerIDPID reads the process id out of a queue worker id
// (host-pid-rand).
var workerIDPID = regexp.MustCompile(`-(\d+)-[0-9a-f]{4}$`)

func pidOf(workerID string) int {
	m := workerIDPID.FindStringSubmatch(workerID)
	if m == nil {
		return 0
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

// jobRun is where a job is or was last run, read from docket_jobs.
type jobRun struct {
	state    string
	attempt  int
	progress int
	pid      int
}

// runs returns the jobs' last runs by job id.
func (db pgDatabase) runs(t *testing.T, ids []string) map[string]jobRun {
	t.Helper()
	rows, err := db.conn.Query(context.Background(),
		`SELECT id::text, state, attempt, progress, worker_id FROM docket_jobs WHERE id::text = ANY($1)`, ids)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]jobRun{}
	for rows.Next() {
		var (
			id, worker string
			r          jobRun
		)
		if err := rows.Scan(&id, &r.state, &r.attempt, &r.progress, &worker); err != nil {
			t.Fatal(err)
		}
		r.pid = pidOf(worker)
		out[id] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// attempt is one ended attempt of a job, from docket_job_attempts.
type attempt struct {
	n       int
	pid     int
	outcome string
}

func (db pgDatabase) attempts(t *testing.T, id string) []attempt {
	t.Helper()
	rows, err := db.conn.Query(context.Background(),
		`SELECT attempt, worker_id, outcome FROM docket_job_attempts WHERE job_id::text = $1 ORDER BY id`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []attempt
	for rows.Next() {
		var (
			a      attempt
			worker string
		)
		if err := rows.Scan(&a.n, &worker, &a.outcome); err != nil {
			t.Fatal(err)
		}
		a.pid = pidOf(worker)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// waitLeader waits until process pid leads the queue's maintenance (the
// lease rescue), so that killing another process leaves the rescue running.
func (db pgDatabase) waitLeader(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var leader string
		err := db.conn.QueryRow(context.Background(),
			`SELECT leader_id FROM docket_leaders WHERE name = 'maintenance' AND expires_at > now()`).Scan(&leader)
		if err == nil && pidOf(leader) == pid {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d does not lead maintenance within %s (leader %q, %v)", pid, within, leader, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
