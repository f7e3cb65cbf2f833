package chaos

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// env is one test's database, seen from the test process.
type env struct {
	t          *testing.T
	connString string
	pool       *pgxpool.Pool
	client     *queue.Client
}

// setup skips the test in -short mode, else creates a fresh database (the
// migrated template plus the ledger tables) and connects to it.
func setup(t *testing.T) *env {
	t.Helper()
	return setupOn(t, cluster)
}

// setupOn is setup on cluster c (one a test started for itself).
func setupOn(t *testing.T, c *pgtest.Cluster) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("chaos tests start real worker processes; skipped with -short")
	}
	connString := c.NewDatabase(t)
	pool, err := pgxpool.New(context.Background(), connString)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(pool.Close)
	return &env{t: t, connString: connString, pool: pool, client: queue.NewClient(postgres.New(pool), queue.ClientConfig{})}
}

// workerArgs are the flags every worker of the test gets.
func (e *env) workerArgs(extra ...string) []string {
	return append([]string{"-database-url", e.connString}, extra...)
}

// enqueue stores jobs in one transaction, with their enqueue times (by the
// database clock, just before the commit) in enqueues, and returns their
// ids once the commit returned: the acknowledged enqueues.
func (e *env) enqueue(ctx context.Context, ps []*queue.EnqueueParams) ([]int64, error) {
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	res, err := e.client.EnqueueManyTx(ctx, tx, ps)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(res))
	tenants := make([]string, len(res))
	for i, r := range res {
		ids[i], tenants[i] = r.Job.ID, r.Job.TenantID
	}
	_, err = tx.Exec(ctx, `INSERT INTO enqueues (job_id, tenant_id) SELECT * FROM unnest($1::bigint[], $2::text[])`, ids, tenants)
	if err != nil {
		return nil, fmt.Errorf("record enqueues: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	return ids, nil
}

// mustEnqueue is enqueue that fails the test on error.
func (e *env) mustEnqueue(ps []*queue.EnqueueParams) []int64 {
	e.t.Helper()
	ids, err := e.enqueue(context.Background(), ps)
	if err != nil {
		e.t.Fatalf("enqueue: %v", err)
	}
	return ids
}

// Job kinds of the chaosworker.
const (
	kindLedger = "ledger" // records, sleeps, stores its effect and completes in one transaction
	kindExit   = "exit"   // records, then exits the process with status 3
	kindSleep  = "sleep"  // records, sleeps; the engine completes it
)

// ledgerJobs returns n ledger job params spread over tenants named
// prefix0..prefix(tenants-1).
func ledgerJobs(n, tenants int, prefix string, maxAttempts int, args any) []*queue.EnqueueParams {
	return jobsOf(kindLedger, n, tenants, prefix, maxAttempts, args)
}

// jobsOf returns n job params of kind spread over tenants named
// prefix0..prefix(tenants-1).
func jobsOf(kind string, n, tenants int, prefix string, maxAttempts int, args any) []*queue.EnqueueParams {
	ps := make([]*queue.EnqueueParams, n)
	for i := range ps {
		ps[i] = &queue.EnqueueParams{
			Kind: kind, TenantID: fmt.Sprintf("%s%d", prefix, i%tenants),
			MaxAttempts: maxAttempts, Args: args,
		}
	}
	return ps
}

// count runs a count(*) query.
func (e *env) count(query string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", query, err)
	}
	return n
}

// dbNow is the database clock.
func (e *env) dbNow() time.Time {
	e.t.Helper()
	var now time.Time
	if err := e.pool.QueryRow(context.Background(), `SELECT clock_timestamp()`).Scan(&now); err != nil {
		e.t.Fatalf("clock: %v", err)
	}
	return now
}

// stats returns the default queue's job counts by state.
func (e *env) stats() map[queue.State]int {
	e.t.Helper()
	s, err := e.client.Stats(context.Background(), queue.DefaultQueue)
	if err != nil {
		e.t.Fatalf("stats: %v", err)
	}
	return s.Counts
}

// jobs returns every job of the database by id, paging through the API.
func (e *env) jobs() map[int64]*queue.Job {
	e.t.Helper()
	out := map[int64]*queue.Job{}
	var before int64
	for {
		page, err := e.client.List(context.Background(), &queue.JobListParams{BeforeID: before, Limit: 1000})
		if err != nil {
			e.t.Fatalf("list jobs: %v", err)
		}
		if len(page) == 0 {
			return out
		}
		for _, j := range page {
			out[j.ID] = j
			if before == 0 || j.ID < before {
				before = j.ID
			}
		}
	}
}

// byID returns the jobs sorted by id.
func byID(jobs map[int64]*queue.Job) []*queue.Job {
	out := make([]*queue.Job, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, j)
	}
	slices.SortFunc(out, func(a, b *queue.Job) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// waitFor polls cond until it holds or timeout passes; then it fails the
// test with cond's last description of what it saw.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	if ok, seen := pollUntil(timeout, cond); !ok {
		t.Fatalf("timed out after %s waiting for %s; last seen: %s", timeout, what, seen)
	}
}

// pollUntil polls cond until it holds or timeout passes, and returns
// whether it held with cond's last description.
func pollUntil(timeout time.Duration, cond func() (bool, string)) (bool, string) {
	deadline := time.Now().Add(timeout)
	for {
		ok, seen := cond()
		if ok || time.Now().After(deadline) {
			return ok, seen
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// formatStates renders job counts by state.
func formatStates(counts map[queue.State]int) string {
	var b strings.Builder
	for _, s := range []queue.State{queue.StateScheduled, queue.StatePending, queue.StateRunning,
		queue.StateCompleted, queue.StateFailed, queue.StateCancelled} {
		fmt.Fprintf(&b, "%s=%d ", s, counts[s])
	}
	return strings.TrimSpace(b.String())
}

// firstIDs renders at most n ids.
func firstIDs(ids []int64, n int) string {
	if len(ids) <= n {
		return fmt.Sprint(ids)
	}
	return fmt.Sprintf("%v … (%d in all)", ids[:n], len(ids))
}
