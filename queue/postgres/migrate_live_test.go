package postgres_test

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/docketq/docket/queue/driver"
)

// TestMigration_InsertsDuringMigration: a migration that replaces
// docket_insert_jobs with DROP FUNCTION and CREATE FUNCTION gives the
// function a new oid, and an insert that had resolved the old one (a
// prepared statement, a session's plan) and ran as the migration committed
// failed with "cache lookup failed for function N" (SQLSTATE XX000, not an
// error the driver translates): `docket migrate` during a deploy failed
// some of the enqueues in flight. Its repeatable file uses CREATE OR
// REPLACE FUNCTION, which keeps the oid (and the grants); a session running
// the function recompiles it. Each run of the file here, as the migrator
// runs it when it changes, is one chance of the race.
func TestMigration_InsertsDuringMigration(t *testing.T) {
	t.Parallel()
	f := setup(t)
	body, err := os.ReadFile("repeatable/insert_jobs.sql")
	if err != nil {
		t.Fatal(err)
	}
	var (
		stop   atomic.Bool
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed = map[string]int{}
	)
	fail := func(err error) {
		mu.Lock()
		failed[err.Error()]++
		mu.Unlock()
	}
	for g := range 6 {
		wg.Go(func() {
			tenant := fmt.Sprintf("t%d", g)
			for !stop.Load() {
				if g%2 == 0 { // an enqueue of its own
					if _, err := f.x.JobInsertMany(f.ctx, []*driver.JobInsertParams{job(tenant)}); err != nil {
						fail(err)
					}
					continue
				}
				// Enqueues in an application's transaction.
				tx, err := f.d.Pool().Begin(f.ctx)
				if err != nil {
					fail(err)
					continue
				}
				x, err := f.d.UnwrapTx(tx)
				if err != nil {
					t.Error(err)
					return
				}
				for range 2 {
					if _, err := x.JobInsertMany(f.ctx, []*driver.JobInsertParams{job(tenant)}); err != nil {
						fail(err)
						break
					}
				}
				_ = tx.Rollback(f.ctx)
			}
		})
	}
	for range 300 {
		if _, err := f.d.Pool().Exec(f.ctx, string(body)); err != nil {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("repeatable/insert_jobs.sql run again: %v", err)
		}
	}
	stop.Store(true)
	wg.Wait()
	for msg, n := range failed {
		t.Errorf("%d enqueues failed while repeatable/insert_jobs.sql ran: %s", n, msg)
	}
}
