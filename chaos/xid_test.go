//go:build chaos

// The full tier only (-tags chaos, make chaos): the XIDs per job are a measurement with a bound,
// and its own XID and commit counts want the cluster to itself.

package chaos

import (
	"context"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/postgres"
)

// xidsPerJobBound is the XID budget per job: enqueue, claim and
// complete, at most one transaction id each.
const xidsPerJobBound = 3.0

// TestXIDBudget_Smoke is the XID budget at half size: the transaction ids 5,000
// jobs consume through the engine, measured with pg_current_xact_id()
// before and after: 4,000 enqueued in transactions of 100 and 1,000 singly, claimed and completed by 4 workers × 8 with the maintenance
// sweeps running. The ledger's own autocommit inserts (one per execution)
// are subtracted. It must stay within 3 per job; the figures go to
// docs/reliability.md. max_prepared_transactions must be 0 (no two-phase
// commit: a forgotten prepared transaction pins the horizon for good).
func TestXIDBudget_Smoke(t *testing.T) {
	runXIDBudget(t, 4000, 1000)
}

// runXIDBudget measures the xids per job of batched jobs enqueued in
// transactions of 100 and single ones enqueued one per transaction.
func runXIDBudget(t *testing.T, batched, single int) {
	const batch = 100
	e := setup(t)
	ctx := context.Background()
	// What the service exports (the health's database.wraparound, the
	// docket_db_xid_age gauges): the ages and the setting.
	w, err := postgres.New(e.pool).Wraparound(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("exported: %+v", w)
	if w.DatabaseAge <= 0 || w.OldestDatabaseAge < w.DatabaseAge {
		t.Errorf("Wraparound = %+v, want positive ages", w)
	}
	if w.MaxPreparedTransactions != 0 {
		t.Errorf("max_prepared_transactions = %d, want 0", w.MaxPreparedTransactions)
	}
	// A 10 s lease: on a loaded box the first seconds of a fresh database
	// once stalled heartbeats past the default 2 s (8 jobs rescued and run
	// twice), which is not what this test measures.
	startFleet(t, 4, false, e.workerArgs("-concurrency", "8", "-lease", "10s"))
	xid := func() uint64 {
		var x uint64
		if err := e.pool.QueryRow(ctx, `SELECT pg_current_xact_id()::text::bigint`).Scan(&x); err != nil {
			t.Fatal(err)
		}
		return x
	}
	start, began := xid(), time.Now()
	var acked []int64
	for i := 0; i < batched; i += batch {
		acked = append(acked, e.mustEnqueue(jobsOf(kindSleep, batch, 40, "xid-", 25, map[string]int{"sleep_ms": 0}))...)
	}
	for range single {
		acked = append(acked, e.mustEnqueue(jobsOf(kindSleep, 1, 40, "xid-", 25, map[string]int{"sleep_ms": 0}))...)
	}
	waitFor(t, 2*time.Minute, "the drain", func() (bool, string) {
		s := e.stats()
		return s[queue.StateCompleted] == len(acked), formatStates(s)
	})
	end := xid()
	took := time.Since(began)
	executions := e.count(`SELECT count(*) FROM executions`)
	enqueueTx := batched/batch + single
	// end - start - 1: the reading of end took one id itself.
	engine := float64(end-start-1) - float64(executions)
	perJob := engine / float64(len(acked))
	t.Logf("%d jobs (%d in %d transactions of %d, %d singly): %d xids in %.1f s, %d of them the ledger's; "+
		"%.3f per job by the engine (bound %.0f): enqueue transactions %.3f per job, claims, completions and sweeps %.3f",
		len(acked), batched, batched/batch, batch, single, end-start-1, took.Seconds(), executions,
		perJob, xidsPerJobBound, float64(enqueueTx)/float64(len(acked)), (engine-float64(enqueueTx))/float64(len(acked)))
	if perJob > xidsPerJobBound {
		t.Errorf("%.3f transaction ids per job, over the budget of %.0f", perJob, xidsPerJobBound)
	}
	// Sleep jobs have no effect row: every job completed (the drain) and
	// ran once.
	if executions != len(acked) {
		t.Errorf("%d executions for %d jobs, want one each (no fault was injected)", executions, len(acked))
	}
}
