package postgres_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// TestJobInsertMany_UniqueConcurrent: 50 inserts of one key, half through
// the Go driver and half through docket_enqueue, while a transaction that
// inserted the key first stays open, then commits: one job, every caller
// gets its id.
func TestJobInsertMany_UniqueConcurrent(t *testing.T) {
	t.Parallel()
	f := setup(t)
	// The holder and the lock watch have their own pool: the 50 inserts
	// may take every connection of f's.
	other := f.secondDriver()
	holder, err := other.Executor().Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(f.ctx) //nolint:errcheck // after Commit it does nothing
	p := job("acme")
	p.UniqueKey = "doc-1"
	first, err := holder.JobInsertMany(f.ctx, []*driver.JobInsertParams{p})
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	ids := make([]int64, n)
	dups := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if i%2 == 0 {
				res, err := f.x.JobInsertMany(f.ctx, []*driver.JobInsertParams{p})
				if err != nil {
					t.Errorf("insert %d: %v", i, err)
					return
				}
				ids[i], dups[i] = res[0].Job.ID, res[0].Duplicate
				return
			}
			err := f.d.Pool().QueryRow(f.ctx, `SELECT docket_enqueue('q', 'k', 'acme', '{}', unique_key => 'doc-1')`).Scan(&ids[i])
			if err != nil {
				t.Errorf("docket_enqueue %d: %v", i, err)
			}
			dups[i] = true
		})
	}
	// Let the inserts reach the unique index and wait on the holder.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var waiting int
		err := other.Pool().QueryRow(f.ctx,
			`SELECT count(*) FROM pg_locks WHERE locktype = 'transactionid' AND NOT granted`).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting >= 10 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := holder.Commit(f.ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i := range n {
		if ids[i] != first[0].Job.ID || !dups[i] {
			t.Errorf("insert %d: job %d duplicate %v, want duplicate of %d", i, ids[i], dups[i], first[0].Job.ID)
		}
	}
	if got := f.queryInt(`SELECT count(*) FROM docket_jobs`); got != 1 {
		t.Fatalf("%d jobs stored, want 1", got)
	}
}

// TestDocketEnqueue: the SQL function enqueues like JobInsertMany — a
// claimable job, its tenant's row, a notification — and validates.
func TestDocketEnqueue(t *testing.T) {
	t.Parallel()
	f := setup(t)
	id := f.queryInt(`SELECT docket_enqueue('q', 'k', 'acme', '{"n": 1}', priority => 5, max_attempts => 7)`)
	j, err := f.x.JobGet(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != queue.StatePending || j.Priority != 5 || j.MaxAttempts != 7 || j.TenantID != "acme" {
		t.Fatalf("enqueued %+v", j)
	}
	later := f.queryInt(`SELECT docket_enqueue('q', 'k', 'acme', run_at => now() + interval '1 hour')`)
	if j, _ := f.x.JobGet(f.ctx, later); j.State != queue.StateScheduled {
		t.Fatalf("job with a future run_at is %s, want scheduled", j.State)
	}
	if got := f.claim(f.x, 10); len(got) != 1 || got[0].ID != id {
		t.Fatalf("claimed %v, want job %d", got, id)
	}
	for _, bad := range []string{
		`SELECT docket_enqueue('Bad Queue', 'k', 'acme')`,
		`SELECT docket_enqueue('q', '', 'acme')`,
		`SELECT docket_enqueue('q', 'k', '')`,
		`SELECT docket_enqueue('q', 'k', 'acme', max_attempts => 0)`,
	} {
		if _, err := f.d.Pool().Exec(f.ctx, bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	// Through the driver, an invalid queue is queue.ErrInvalid.
	p := job("acme")
	p.Queue = "Bad Queue"
	if _, err := f.x.JobInsertMany(f.ctx, []*driver.JobInsertParams{p}); err == nil {
		t.Error("insert into an invalid queue: no error")
	}
}

// TestJobInsertMany_KnownTenantsKeepTheirRow: a batch for tenants whose
// claim row exists neither looks up their limit nor tries to insert the row
// again (the BEFORE INSERT trigger of docket_tenant_queues fires for every
// row an INSERT ... ON CONFLICT tries): only a new tenant's row is created.
// Before migration 015 every batch did both for each of its tenants.
func TestJobInsertMany_KnownTenantsKeepTheirRow(t *testing.T) {
	t.Parallel()
	f := setup(t)
	known := tenantNames("known", 10)
	f.enqueue(1, known...)

	tx, err := f.d.Pool().Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(f.ctx) //nolint:errcheck // read-only use; rolled back
	if _, err := tx.Exec(f.ctx, `SET LOCAL track_functions = 'all'`); err != nil {
		t.Fatal(err)
	}
	tenants := slices.Concat(known, []string{"newcomer"})
	for range 3 {
		var n int
		err := tx.QueryRow(f.ctx, `SELECT count(*) FROM docket_insert_jobs(
    array_fill('q'::text, ARRAY[cardinality($1::text[])]), array_fill('k'::text, ARRAY[cardinality($1::text[])]), $1::text[],
    array_fill('{}'::jsonb, ARRAY[cardinality($1::text[])]), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false)`, tenants).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n != len(tenants) {
			t.Fatalf("inserted %d jobs, want %d", n, len(tenants))
		}
	}
	// The new tenant's row only: docket_tenant_limit is called by the
	// insert and again by the row's trigger under the settings lock
	// (migration 019), which decides.
	for fn, want := range map[string]int64{"docket_tenant_limit": 2, "docket_tenant_queues_settings": 1} {
		var calls int64
		if err := tx.QueryRow(f.ctx, `SELECT coalesce(pg_stat_get_xact_function_calls($1::regproc::oid), 0)`, fn).Scan(&calls); err != nil {
			t.Fatal(err)
		}
		if calls != want {
			t.Errorf("%s called %d times for 3 batches of %d known tenants and a new one, want %d (the new tenant's row)", fn, calls, len(known), want)
		}
	}
	var rows int64
	if err := tx.QueryRow(f.ctx, `SELECT count(*) FROM docket_tenant_queues WHERE tenant_id = 'newcomer'`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 {
		t.Errorf("%d claim rows for the new tenant, want 1", rows)
	}
}
