package chaos

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPGCrash_AsyncCommitRefused is TestPGCrash_Smoke's negative control: with
// synchronous_commit off a crash may lose acknowledged jobs, so a worker
// must refuse to start when its role runs with it off. The worker
// (-require-sync-commit, the check docket serve and worker make) starts on
// a database that says on, and exits non-zero, naming the setting and the
// fix, once its role says off there (ALTER ROLE ... IN DATABASE, which
// overrides the database's setting).
func TestPGCrash_AsyncCommitRefused(t *testing.T) {
	scheduleLight(t) // schedule_test.go: two short worker starts
	e := setupOn(t, cluster)
	var role, db string
	if err := e.pool.QueryRow(t.Context(), `SELECT current_user, current_database()`).Scan(&role, &db); err != nil {
		t.Fatal(err)
	}
	role, db = pgx.Identifier{role}.Sanitize(), pgx.Identifier{db}.Sanitize()
	// The shared cluster runs with synchronous_commit off, for speed.
	if _, err := e.pool.Exec(t.Context(), `ALTER DATABASE `+db+` SET synchronous_commit = on`); err != nil {
		t.Fatal(err)
	}

	start := func(gen int) *proc {
		p, err := startProc(t.TempDir(), 0, gen, e.workerArgs("-require-sync-commit", "-concurrency", "1"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			p.signal(syscall.SIGKILL)
			<-p.done
		})
		return p
	}
	p := start(0)
	if err := p.waitReady(20 * time.Second); err != nil {
		t.Fatalf("on synchronous_commit = on: %v", err)
	}
	p.signal(syscall.SIGTERM)
	<-p.done

	// A setting of the role in this database, dropped with it.
	if _, err := e.pool.Exec(t.Context(), `ALTER ROLE `+role+` IN DATABASE `+db+` SET synchronous_commit = off`); err != nil {
		t.Fatal(err)
	}
	p = start(1)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("a worker on synchronous_commit = off still runs after 20 s:\n%s", p.tail(10))
	}
	out := p.tail(10)
	if p.exitCode() == 0 || !strings.Contains(out, "synchronous_commit is off") || !strings.Contains(out, "ALTER ROLE") {
		t.Errorf("worker on synchronous_commit = off: %s, want a non-zero exit naming the setting and the fix:\n%s", p.status(), out)
	}
}
