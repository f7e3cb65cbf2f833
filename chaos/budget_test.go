package chaos

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// budgetConfig sizes a connection-budget run.
type budgetConfig struct {
	maxConns     int // the server's max_connections
	jobs         int
	procs, slots int
	pool         int           // each worker's pool (plus its LISTEN connection)
	stopped      int           // workers SIGTERMed halfway
	phase        time.Duration // each phase: all workers, then without the stopped ones
	drain        time.Duration
}

// budgetRole is the workers' role: not a superuser, so the server keeps
// its superuser_reserved_connections (3) for the test's own connections
// while the workers fight over the rest.
const budgetRole = "chaos_budget"

// budgetRefused is what PostgreSQL answers a connection over the budget
// ("sorry, too many clients already", or "remaining connection slots are
// reserved" for a role that is not a superuser).
const budgetRefused = "SQLSTATE 53300"

// TestConnectionBudget_Smoke: a server with max_connections 20
// (17 for the workers' role) and 6 workers × 8 slots, each with a pool of 5
// and its LISTEN connection (36 wanted), while 2,000 ledger jobs are
// enqueued over 11 s; 6 s in, 2 workers are SIGTERMed. The workers must
// log the refusals (SQLSTATE 53300) with the failed operation, back off rather than spin
// (at most 25 logged refusals per worker-second), never exit on their own,
// and make progress in both phases; the total-queue check must pass, each
// duplicate explained by an attempt that failed on a refused connection or
// was rescued (its lease ran out) on a worker that logged refusals. Each
// worker's start-up check (-check-budget, as docket worker's) must warn
// that 6 processes × (pool 5 + 1) = 36 connections exceed the slots.
func TestConnectionBudget_Smoke(t *testing.T) {
	nightlyOnly(t)
	scheduleHeavy(t) // schedule_test.go
	runBudget(t, budgetConfig{maxConns: 20, jobs: 2000, procs: 6, slots: 8, pool: 5, stopped: 2,
		phase: 6 * time.Second, drain: 30 * time.Second})
}

// refusalRate caps the refused connections a worker logs per second: its
// loops back off (claims 50 ms doubling to 2 s, failed jobs by their retry
// backoff), so a worker that spins on refusals goes far over it.
const refusalRate = 25

func runBudget(t *testing.T, c budgetConfig) {
	cl := startCluster(t, pgtest.Options{MaxConnections: c.maxConns})
	e := setupBudget(t, cl)
	workerURL := e.connString + " user=" + budgetRole
	// Every worker connects before any starts (a start gate), so each has
	// a connection of its own when the pools start to grow: started
	// plainly, on a loaded machine the first five could fill the budget
	// before the sixth connected at all, and it then waited (as it
	// should: TestConnectionBudget_StartWhenFull) for connections the
	// others' idle pools keep.
	f := startFleetGated(t, c.procs, []string{"-database-url", workerURL,
		"-concurrency", strconv.Itoa(c.slots), "-pool", strconv.Itoa(c.pool),
		"-lease", "2s", "-rescue", "250ms", "-poll", "200ms", "-grace", "3s",
		"-backoff-min", "50ms", "-backoff-max", "500ms",
		"-ledger-min", "1ms", "-ledger-max", "20ms", "-check-budget"}, func(f *fleet) { e.checkOneSessionEach(f) })
	start := time.Now()

	// The workers' sessions, sampled (by a superuser connection).
	var peak int
	stopSampling := make(chan struct{})
	var sampling sync.WaitGroup
	sampling.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-tick.C:
			}
			var n int
			if err := e.pool.QueryRow(context.Background(),
				`SELECT count(*) FROM pg_stat_activity WHERE usename = $1`, budgetRole).Scan(&n); err == nil {
				peak = max(peak, n)
			}
		}
	})

	// Enqueue evenly over both phases.
	produced := make(chan []int64, 1)
	var enqueueErrs []error
	go func() {
		var acked []int64
		defer func() { produced <- acked }()
		const batch = 20
		batches := (c.jobs + batch - 1) / batch
		pace := time.NewTicker(2 * c.phase * 9 / 10 / time.Duration(batches))
		defer pace.Stop()
		for i := range batches {
			ids, err := e.enqueue(context.Background(), ledgerJobs(min(batch, c.jobs-i*batch), 20, "tenant-", 100, nil))
			if err != nil {
				enqueueErrs = append(enqueueErrs, fmt.Errorf("enqueue batch %d: %w", i, err))
			}
			acked = append(acked, ids...)
			<-pace.C
		}
	}()

	time.Sleep(c.phase) // the first phase: every worker over the budget
	phase2 := e.dbNow()
	var stopped []*proc
	for _, p := range f.procs()[:c.stopped] {
		p.signal(syscall.SIGTERM)
		stopped = append(stopped, p)
	}
	t.Logf("%4.1fs SIGTERM to %d workers; %s", time.Since(start).Seconds(), c.stopped, formatStates(e.stats()))
	for _, p := range stopped {
		select {
		case <-p.done:
			if p.exitCode() != 0 {
				t.Errorf("SIGTERMed worker pid %d exited %s, want 0\n%s", p.pid, p.status(), p.tail(20))
			}
		case <-time.After(15 * time.Second):
			t.Errorf("SIGTERMed worker pid %d still running after 15 s", p.pid)
		}
	}
	acked := <-produced
	drained, seen := pollUntil(c.drain, func() (bool, string) {
		s := e.stats()
		busy := s[queue.StateScheduled] + s[queue.StatePending] + s[queue.StateRunning]
		return busy == 0 && s[queue.StateCompleted]+s[queue.StateFailed] >= len(acked), formatStates(s)
	})
	close(stopSampling)
	sampling.Wait()
	elapsed := time.Since(start)
	if !drained {
		t.Errorf("not drained %s after the last enqueue: %s", c.drain, seen)
	}

	// Progress per phase and per worker, by the effects' times.
	var phase1, phase2n int
	var phase2Secs float64
	if err := e.pool.QueryRow(context.Background(),
		`SELECT count(*) FILTER (WHERE done_at < $1), count(*) FILTER (WHERE done_at >= $1),
		        coalesce(extract(epoch FROM max(done_at) - $1), 0) FROM effects`, phase2).
		Scan(&phase1, &phase2n, &phase2Secs); err != nil {
		t.Fatalf("effects per phase: %v", err)
	}
	perPID := map[int]int{}
	rows, err := e.pool.Query(context.Background(), `SELECT worker_pid, count(*) FROM effects GROUP BY 1`)
	if err != nil {
		t.Fatalf("effects per worker: %v", err)
	}
	for rows.Next() {
		var pid, n int
		if err := rows.Scan(&pid, &n); err != nil {
			t.Fatal(err)
		}
		perPID[pid] = n
	}
	rows.Close()

	// The refusals, as each worker logged them.
	refusals, first := 0, ""
	refusedPIDs := map[int]bool{}
	for _, p := range f.history() {
		n, line := countLines(t, p.logPath, budgetRefused)
		refusals += n
		refusedPIDs[p.pid] = n > 0
		if first == "" {
			first = line
		}
		if lived := p.lifetime().Seconds(); float64(n) > refusalRate*max(lived, 1) {
			t.Errorf("worker pid %d logged %d refused connections in %.1f s (over %d/s): it does not back off",
				p.pid, n, lived, refusalRate)
		}
		if perPID[p.pid] == 0 {
			t.Errorf("worker pid %d completed no job: it made no progress under the budget", p.pid)
		}
	}
	// Start-up validation: each worker checks after its gate opens, when
	// every worker holds a session, so each counts all of them.
	budgetWarning := fmt.Sprintf("connection budget: %d processes × (pool %d + 1) = %d connections > ",
		c.procs, c.pool, c.procs*(c.pool+1))
	var warned string
	for _, p := range f.history() {
		if n, line := countLines(t, p.logPath, budgetWarning); n != 1 {
			t.Errorf("worker pid %d logged %d start-up warnings %q, want 1", p.pid, n, budgetWarning)
		} else if warned == "" {
			warned = line
		}
	}
	t.Logf("start-up warning, e.g. %q", warned)
	if refusals == 0 {
		t.Errorf("no worker logged a refused connection (%q): the budget was never exceeded (peak %d sessions)", budgetRefused, peak)
	}

	// A duplicate is explained by an attempt that failed on a refusal, or
	// that was rescued (its lease ran out: heartbeats or the stored outcome
	// refused) on a worker that logged refusals.
	retried, rescued := e.budgetAttempts()
	v := e.checkTotalQueueExplained(acked, func(x execution) bool {
		k := attemptKey{x.JobID, x.Attempt}
		return retried[k] || rescued[k] && refusedPIDs[x.PID]
	})
	t.Logf("total-queue: %s", v)
	for _, x := range v.Unexplained {
		t.Logf("unexplained %s: the attempts recorded for job %d: %s", x, x.JobID, e.attemptRecords(x.JobID))
	}
	for _, p := range v.problems() {
		t.Error(p)
	}
	for _, p := range f.history() {
		if p.exited() && !slicesContains(stopped, p) {
			t.Errorf("worker pid %d died on its own: %s\n%s", p.pid, p.status(), p.tail(20))
		}
	}
	for _, err := range enqueueErrs {
		t.Errorf("%v (the test's connections have the reserved slots)", err)
	}
	var maxAttempt int
	for _, j := range v.jobs {
		maxAttempt = max(maxAttempt, j.Attempt)
	}
	t.Logf("budget %d (workers %d), peak worker sessions %d; %d refused connections logged, e.g. %q",
		c.maxConns, c.maxConns-3, peak, refusals, first)
	t.Logf("completed %d jobs in phase 1 (%d workers, %.0f jobs/s), %d after (%d workers, %.0f jobs/s until drained); "+
		"%d attempts failed on a refusal, %d rescued, most attempts of a job %d; %.1f s in all",
		phase1, c.procs, float64(phase1)/c.phase.Seconds(), phase2n, c.procs-c.stopped, float64(phase2n)/max(phase2Secs, 0.001),
		len(retried), len(rescued), maxAttempt, elapsed.Seconds())
}

// checkOneSessionEach checks that every worker of f, at its start gate,
// holds exactly one session (its pool's first connection): the premise of
// the budget's first phase, six workers each with a connection.
func (e *env) checkOneSessionEach(f *fleet) {
	e.t.Helper()
	for _, p := range f.procs() {
		n := e.count(`SELECT count(*) FROM pg_stat_activity WHERE usename = $1 AND application_name LIKE $2`,
			budgetRole, p.appLike())
		if n != 1 {
			e.t.Fatalf("worker pid %d holds %d sessions at its start gate, want 1", p.pid, n)
		}
	}
}

// setupBudget is setupOn with a test pool of 2 connections (the reserved
// slots are 3) and the workers' role.
func setupBudget(t *testing.T, c *pgtest.Cluster) *env {
	t.Helper()
	connString := c.NewDatabase(t)
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(pool.Close)
	db := databaseName(t, connString)
	// BYPASSRLS: the engine's tables force row-level security with a
	// policy for their owner only.
	for _, q := range []string{
		`CREATE ROLE ` + budgetRole + ` LOGIN NOSUPERUSER BYPASSRLS`,
		`GRANT ALL ON DATABASE ` + db + ` TO ` + budgetRole,
		`GRANT ALL ON ALL TABLES IN SCHEMA public TO ` + budgetRole,
		`GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO ` + budgetRole,
		`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO ` + budgetRole,
	} {
		if _, err := pool.Exec(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return &env{t: t, connString: connString, pool: pool, client: queue.NewClient(postgres.New(pool), queue.ClientConfig{})}
}

// attemptKey names one attempt of a job.
type attemptKey struct {
	job     int64
	attempt int
}

// budgetAttempts returns the attempts that failed on a refused connection
// (their recorded error), and those rescued after their lease ran out.
func (e *env) budgetAttempts() (refused, rescued map[attemptKey]bool) {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(),
		`SELECT job_id, attempt, outcome, error LIKE '%' || $1 || '%' FROM docket_job_attempts WHERE outcome <> 'completed'`,
		budgetRefused)
	if err != nil {
		e.t.Fatalf("read attempts: %v", err)
	}
	defer rows.Close()
	refused, rescued = map[attemptKey]bool{}, map[attemptKey]bool{}
	for rows.Next() {
		var k attemptKey
		var outcome string
		var isRefusal bool
		if err := rows.Scan(&k.job, &k.attempt, &outcome, &isRefusal); err != nil {
			e.t.Fatal(err)
		}
		switch {
		case isRefusal:
			refused[k] = true
		case outcome == string(queue.OutcomeTimedOut):
			rescued[k] = true
		}
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return refused, rescued
}

// attemptRecords describes the ended attempts recorded for a job, for a
// failure's message: what the oracle read when it could not explain a
// duplicate.
func (e *env) attemptRecords(job int64) string {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(),
		`SELECT attempt, outcome, worker_id, error FROM docket_job_attempts WHERE job_id = $1 ORDER BY id`, job)
	if err != nil {
		return fmt.Sprintf("(read: %v)", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var (
			attempt                 int
			outcome, worker, errMsg string
		)
		if err := rows.Scan(&attempt, &outcome, &worker, &errMsg); err != nil {
			return fmt.Sprintf("(scan: %v)", err)
		}
		out = append(out, fmt.Sprintf("attempt %d %s on %s: %q", attempt, outcome, worker, errMsg))
	}
	if err := rows.Err(); err != nil {
		return fmt.Sprintf("(read: %v)", err)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "; ")
}

// countLines counts the lines of a file that contain s, and returns the
// first.
func countLines(t *testing.T, path, s string) (int, string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	n, first := 0, ""
	for line := range strings.Lines(string(b)) {
		if strings.Contains(line, s) {
			if n == 0 {
				first = strings.TrimSpace(line)
			}
			n++
		}
	}
	return n, first
}

func slicesContains(ps []*proc, p *proc) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// TestConnectionBudget_StartWhenFull is the connection budget's start-up case: a worker
// started while every connection slot its role may use is taken must not
// exit (under a supervisor that is a crash loop); it must wait, retrying
// with back-off, and work once slots free up. It failed before
// postgres.WaitReady: the worker exited with status 1 at once, as `docket
// worker` did (postgres.Open pings once, and the ping failed with SQLSTATE
// 53300); both now wait (postgres.OpenWaiting for docket worker and serve).
func TestConnectionBudget_StartWhenFull(t *testing.T) {
	nightlyOnly(t)
	scheduleLight(t) // schedule_test.go: a mostly waiting scenario
	cl := startCluster(t, pgtest.Options{MaxConnections: 20})
	e := setupBudget(t, cl)
	ctx := context.Background()
	workerURL := e.connString + " user=" + budgetRole
	var held []*pgx.Conn
	defer func() {
		for _, c := range held {
			_ = c.Close(ctx)
		}
	}()
	for {
		c, err := pgx.Connect(ctx, workerURL)
		if err != nil {
			if !strings.Contains(err.Error(), budgetRefused) {
				t.Fatalf("fill the budget: %v", err)
			}
			break
		}
		held = append(held, c)
	}
	p, err := startProc(t.TempDir(), 0, 0, []string{"-database-url", workerURL, "-concurrency", "4", "-pool", "4"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.signal(syscall.SIGKILL)
		<-p.done
	})
	select {
	case <-p.done:
		t.Fatalf("the worker exited (%s) %s after its start with all %d slots taken; want it to wait and retry:\n%s",
			p.status(), p.lifetime().Round(time.Millisecond), len(held), p.tail(5))
	case <-time.After(5 * time.Second):
	}
	for _, c := range held {
		_ = c.Close(ctx)
	}
	held = nil
	if err := p.waitReady(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	ids := e.mustEnqueue(ledgerJobs(10, 2, "late-", 5, nil))
	waitFor(t, 20*time.Second, "the late worker's jobs", func() (bool, string) {
		n := e.count(`SELECT count(*) FROM effects WHERE job_id = ANY($1)`, ids)
		return n == len(ids), fmt.Sprintf("%d of %d done", n, len(ids))
	})
}
