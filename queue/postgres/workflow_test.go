package postgres_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
)

// TestWorkflow_ConcurrentChildEnds: a parent's children end all at once,
// from several processes (drivers with pools of their own), by finish
// (completed, failed; one in the same batch as the parent's own await),
// by cancel, while the parent returns AwaitChildren. Whatever the
// interleaving, the parent leaves running for pending exactly once (at
// its await, or by the last child's end after it waited), its count of
// open children is 0, its tenant is claimable and the slot counters hold.
func TestWorkflow_ConcurrentChildEnds(t *testing.T) {
	t.Parallel()
	f := setup(t)
	// The test's own record of the parent's moves.
	f.exec(`CREATE TABLE moves (seq bigint GENERATED ALWAYS AS IDENTITY, job_id bigint, old text, new text)`)
	f.exec(`CREATE FUNCTION record_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO moves (job_id, old, new) VALUES (NEW.id, OLD.state, NEW.state); RETURN NULL; END $$`)
	f.exec(`CREATE TRIGGER record_move AFTER UPDATE OF state ON docket_jobs FOR EACH ROW
WHEN (OLD.state <> NEW.state AND NEW.state IN ('waiting', 'pending') AND NEW.parent_id IS NULL)
EXECUTE FUNCTION record_move()`)
	// A child's end holds its parent's row a while before it commits (the
	// count is written by then): a parent's await that starts meanwhile
	// must wait for it and see the new count, not its snapshot's.
	f.exec(`CREATE FUNCTION slow_end() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_sleep(random() * 0.01); RETURN NULL; END $$`)
	f.exec(`CREATE TRIGGER zz_slow_end AFTER UPDATE OF state ON docket_jobs FOR EACH ROW
WHEN (NEW.parent_id IS NOT NULL AND NEW.state IN ('completed', 'failed', 'cancelled'))
EXECUTE FUNCTION slow_end()`)
	if err := f.x.QueueConfigSet(f.ctx, &driver.QueueConfigParams{Queue: "q", DefaultTenantLimit: 100}); err != nil {
		t.Fatal(err)
	}
	procs := []driver.Executor{f.x}
	for range 5 {
		procs = append(procs, f.secondDriver().Executor())
	}
	const rounds, children = 25, 12
	for round := range rounds {
		f.enqueue(1, "acme")
		parent := f.claim(f.x, 1)[0]
		steps := make([]*driver.JobInsertParams, children)
		for i := range steps {
			steps[i] = job("acme")
			steps[i].UniqueKey = driver.StepKey(parent.ID, fmt.Sprint(i))
		}
		if _, err := f.x.JobSpawn(f.ctx, &driver.JobSpawnParams{Lease: parent.Lease(), Children: steps}); err != nil {
			t.Fatal(err)
		}
		kids := f.claim(f.x, children)
		if len(kids) != children {
			t.Fatalf("round %d: claimed %d children, want %d", round, len(kids), children)
		}
		await := &driver.JobFinishParams{Lease: parent.Lease(), Outcome: queue.OutcomeWaiting}
		var (
			start = make(chan struct{})
			wg    sync.WaitGroup
			errs  = make(chan error, children+1)
		)
		end := func(x driver.Executor, ps ...*driver.JobFinishParams) {
			<-start
			if ps[0] == await {
				// Now and then after the children have queued on its row.
				time.Sleep(time.Duration(round%4) * 3 * time.Millisecond)
			}
			res, err := x.JobFinish(f.ctx, ps)
			for _, e := range res {
				err = cmpErr(err, e)
			}
			errs <- err
		}
		for i, k := range kids {
			x := procs[i%len(procs)]
			switch {
			case i == 0 && round%2 == 0:
				// The parent's await and a child's end in one statement.
				a := await
				wg.Go(func() {
					end(x, a, &driver.JobFinishParams{Lease: k.Lease(), Outcome: queue.OutcomeCompleted})
				})
				await = nil
			case i%4 == 1:
				wg.Go(func() {
					<-start
					_, err := x.JobCancel(f.ctx, &driver.JobCancelParams{ID: k.ID})
					errs <- err
				})
			case i%4 == 2:
				wg.Go(func() { end(x, &driver.JobFinishParams{Lease: k.Lease(), Outcome: queue.OutcomeFailed, Error: "e"}) })
			default:
				wg.Go(func() { end(x, &driver.JobFinishParams{Lease: k.Lease(), Outcome: queue.OutcomeCompleted}) })
			}
		}
		if a := await; a != nil {
			x := procs[round%len(procs)]
			wg.Go(func() { end(x, a) })
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		var state string
		var open int64
		if err := f.d.Pool().QueryRow(f.ctx, `SELECT state, children_open FROM docket_jobs WHERE id = $1`, parent.ID).Scan(&state, &open); err != nil {
			t.Fatal(err)
		}
		if state != "pending" || open != 0 {
			t.Fatalf("round %d: parent %s with %d children open, want pending with none", round, state, open)
		}
		// In the order of the moves (a child ended in the parent's own
		// statement fires its trigger, moving the parent on, before the
		// parent's record of its own move).
		moves := f.queryString(`SELECT string_agg(old || '>' || new, ' ' ORDER BY old = 'waiting', seq) FROM moves WHERE job_id = $1`, parent.ID)
		if moves != "running>pending" && moves != "running>waiting waiting>pending" {
			t.Fatalf("round %d: the parent moved %q, want pending once", round, moves)
		}
		if got := f.claim(procs[1], 10); len(got) != 1 || got[0].ID != parent.ID {
			t.Fatalf("round %d: claimed %d jobs after the wake, want the parent", round, len(got))
		}
		f.x.JobFinish(f.ctx, []*driver.JobFinishParams{{Lease: parent.Lease(), Outcome: queue.OutcomeCompleted}}) //nolint:errcheck // a stale lease: only the parent's new attempt matters below
		f.exec(`UPDATE docket_jobs SET state = 'completed', lease_token = 0, completed_at = now() WHERE id = $1`, parent.ID)
		f.exec(`UPDATE docket_tenant_queues SET running = 0`)
		f.exec(`DELETE FROM docket_tenant_freed`)
	}
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// TestJobClaim_WaitingParentsNotScanned: workflow parents waiting for
// their steps are not in the claim's way. Behind 5,000 waiting parents of
// one tenant, a claim of its one pending job reads a handful of job rows
// (the fetch index holds pending jobs only).
func TestJobClaim_WaitingParentsNotScanned(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.enqueue(5000, "acme")
	f.exec(`UPDATE docket_jobs SET state = 'waiting', children_open = 1`)
	f.enqueue(1, "acme")
	f.exec(`VACUUM ANALYZE docket_jobs`)
	plan := f.explainAnalyzeJSON("force_generic_plan", "claim(text, int, bigint, text)", postgres.ClaimSQL, "claim('q', 1, 1000000, 'w')")
	if plan.Plan.ActualRows != 1 {
		t.Fatalf("claimed %d jobs, want the pending one", plan.Plan.ActualRows)
	}
	read := 0
	var walk func(n *planNode)
	walk = func(n *planNode) {
		if n.Relation == "docket_jobs" || strings.HasPrefix(n.IndexName, "docket_jobs") {
			read += n.ActualRows*max(n.ActualLoops, 1) + n.Removed
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(&plan.Plan)
	if read > 20 {
		t.Errorf("the claim read %d job rows behind 5,000 waiting parents, want a handful", read)
	}
}
