package postgres_test

import (
	"errors"
	"testing"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// A session the server ends (an administrator's pg_terminate_backend, as a
// shutdown or a failover does) fails the statement that finds it gone with
// ErrUnavailable: a client may retry, and the HTTP API answers 503.
func TestExecutor_SessionEndedIsUnavailable(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tx, err := f.d.Pool().Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(f.ctx) //nolint:errcheck // the session is gone
	var pid int
	if err := tx.QueryRow(f.ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := f.d.Pool().Exec(f.ctx, `SELECT pg_terminate_backend($1, 5000)`, pid); err != nil {
		t.Fatal(err)
	}
	x, err := f.d.UnwrapTx(tx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = x.JobInsertMany(f.ctx, []*driver.JobInsertParams{job("a")})
	if !errors.Is(err, queue.ErrUnavailable) {
		t.Fatalf("insert on a terminated session: %v, want ErrUnavailable", err)
	}
}
