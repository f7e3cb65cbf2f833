//go:build soak

package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
)

// soakConfig sizes the churn soak; every field has an environment
// variable (soakConfigFromEnv).
type soakConfig struct {
	jobs          int           // SOAK_JOBS: jobs through the queue (default 20,000; make soak: 1,000,000)
	rate          int           // SOAK_RATE: the producer's ceiling in jobs/s (default 900, the soak's nominal rate; small runs: jobs/150 s)
	workers       int           // SOAK_WORKERS: in-process workers, each with its own pool (default 4)
	slots         int           // SOAK_SLOTS: slots per worker (default 16)
	tenants       int           // SOAK_TENANTS: tenants the jobs are spread over (default 100)
	backlog       int           // SOAK_BACKLOG: the producer waits while more than this is unfinished (default 10 s of rate)
	retention     time.Duration // SOAK_RETENTION: completed-job retention (default 1m; runs expected under 5 min: 5s)
	cleanInterval time.Duration // SOAK_CLEAN_INTERVAL: the cleaner's interval (default 0: the engine's, 1m; runs expected under 5 min: 5s)
	sample        time.Duration // SOAK_SAMPLE: sampling interval (default jobs/rate/100, from 1s to 10s)
	reindexAt     float64       // SOAK_REINDEX_AT: REINDEX once this share of the jobs is enqueued (default 0.6)
	effectEvery   int64         // SOAK_EFFECT_EVERY: jobs whose id is a multiple write a ledger effect (default 100)
	out           string        // SOAK_OUT: where soak.csv and the charts go (default a new temporary directory)
}

func soakConfigFromEnv(t *testing.T) soakConfig {
	t.Helper()
	intEnv := func(name string, def int) int {
		v := os.Getenv(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive integer", name, v)
		}
		return n
	}
	durEnv := func(name string, def time.Duration) time.Duration {
		v := os.Getenv(name)
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			t.Fatalf("%s=%q: want a duration", name, v)
		}
		return d
	}
	jobs := intEnv("SOAK_JOBS", 20000)
	// A small run (the quick check) is spread over ~150 s, so that an
	// autovacuum falls in it; a large one runs at the nominal 900 jobs/s.
	c := soakConfig{
		jobs: jobs, rate: intEnv("SOAK_RATE", min(900, max(jobs/150, 10))),
		workers: intEnv("SOAK_WORKERS", 4), slots: intEnv("SOAK_SLOTS", 16), tenants: intEnv("SOAK_TENANTS", 100),
		retention: durEnv("SOAK_RETENTION", time.Minute), cleanInterval: durEnv("SOAK_CLEAN_INTERVAL", 0),
		effectEvery: int64(intEnv("SOAK_EFFECT_EVERY", 100)), reindexAt: 0.6, out: os.Getenv("SOAK_OUT"),
	}
	if d := durEnv("SOAK_DURATION", 0); d > 0 { // a duration sets the rate
		c.rate = max(1, int(float64(c.jobs)/d.Seconds()))
	}
	c.backlog = intEnv("SOAK_BACKLOG", 10*c.rate)
	expected := time.Duration(float64(c.jobs) / float64(c.rate) * float64(time.Second))
	if expected < soakQuickRun {
		// A quick check: retention and cleaning scaled down, so that the
		// cleaner deletes within the run. Full runs keep 1m and the
		// engine's interval.
		c.retention = durEnv("SOAK_RETENTION", 5*time.Second)
		c.cleanInterval = durEnv("SOAK_CLEAN_INTERVAL", 5*time.Second)
	}
	c.sample = durEnv("SOAK_SAMPLE", min(max(expected/100, time.Second), 10*time.Second).Round(100*time.Millisecond))
	if v := os.Getenv("SOAK_REINDEX_AT"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f >= 1 {
			t.Fatalf("SOAK_REINDEX_AT=%q: want a fraction in (0, 1)", v)
		}
		c.reindexAt = f
	}
	return c
}

// soakQuickRun: a run expected to be shorter is a quick check of the code,
// with retention and cleaning scaled down to fit in it.
const soakQuickRun = 5 * time.Minute

// soakLedger is the in-memory execution ledger of the soak's in-process
// workers: every handler start and every stored completion, by job id.
type soakLedger struct {
	mu        sync.Mutex
	executed  map[int64]uint8
	done      map[int64]uint8
	other     map[queue.Outcome]int // outcomes other than completed
	acked     []int64
	completed atomic.Int64
	cleaned   atomic.Int64
}

func newSoakLedger(n int) *soakLedger {
	return &soakLedger{executed: make(map[int64]uint8, n), done: make(map[int64]uint8, n),
		other: map[queue.Outcome]int{}, acked: make([]int64, 0, n)}
}

func (l *soakLedger) ack(ids []int64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acked = append(l.acked, ids...)
	return len(l.acked)
}

func (l *soakLedger) enqueued() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int64(len(l.acked))
}

func (l *soakLedger) started(id int64) {
	l.mu.Lock()
	l.executed[id]++
	l.mu.Unlock()
}

// finished is the workers' Finished hook: called once an outcome is stored.
func (l *soakLedger) finished(job *queue.Job, outcome queue.Outcome, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if outcome == queue.OutcomeCompleted {
		l.done[job.ID]++
		l.completed.Add(1)
		return
	}
	l.other[outcome]++
	if outcome == "" && err != nil {
		l.other["store error: "+queue.Outcome(err.Error())]++
	}
}

func (l *soakLedger) maintained(task string, n int) {
	if task == "clean" {
		l.cleaned.Add(int64(n))
	}
}

// soakVerdict is the ledger's check: Jepsen's total-queue on the
// in-memory ledger.
type soakVerdict struct {
	Acked, Lost, Unexpected, Duplicates, DoubleDone int
	Other                                           map[queue.Outcome]int
}

func (l *soakLedger) check() soakVerdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := soakVerdict{Acked: len(l.acked), Other: l.other}
	ackedSet := make(map[int64]struct{}, len(l.acked))
	for _, id := range l.acked {
		ackedSet[id] = struct{}{}
		if l.done[id] == 0 {
			v.Lost++
		}
		if n := l.executed[id]; n > 1 {
			v.Duplicates += int(n) - 1
		}
		if n := l.done[id]; n > 1 {
			v.DoubleDone += int(n) - 1
		}
	}
	for id := range l.executed {
		if _, ok := ackedSet[id]; !ok {
			v.Unexpected++
		}
	}
	return v
}

// timedDriver is the postgres driver with its claims timed: the worker
// claims through Executor().JobClaim, so this is each claim as the engine
// makes it, statement and round trip.
type timedDriver struct {
	driver.Driver
	exec timedExecutor
}

type timedExecutor struct {
	driver.Executor
	rec *claimRecorder
}

func (d *timedDriver) Executor() driver.Executor { return d.exec }

func (e timedExecutor) JobClaim(ctx context.Context, p *driver.JobClaimParams) ([]*queue.Job, bool, error) {
	begin := time.Now()
	jobs, more, err := e.Executor.JobClaim(ctx, p)
	e.rec.add(begin, len(jobs), err)
	return jobs, more, err
}

// soakWorker is one in-process worker with a pool of its own, as a
// process would have.
type soakWorker struct {
	pool   *pgxpool.Pool
	worker *queue.Worker
}

func startSoakWorkers(t *testing.T, connString string, c soakConfig, rec *claimRecorder, l *soakLedger, logger *slog.Logger) []*soakWorker {
	t.Helper()
	var ws []*soakWorker
	for i := range c.workers {
		pcfg, err := pgxpool.ParseConfig(connString)
		if err != nil {
			t.Fatal(err)
		}
		pcfg.MaxConns = int32(c.slots + 4) //nolint:gosec // small
		pcfg.ConnConfig.RuntimeParams["application_name"] = fmt.Sprintf("soak-worker-%d", i)
		pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		drv := &timedDriver{Driver: postgres.New(pool)}
		drv.exec = timedExecutor{Executor: drv.Driver.Executor(), rec: rec}
		client := queue.NewClient(drv, queue.ClientConfig{Logger: logger})
		h := &soakHandler{pool: pool, ledger: l, effectEvery: c.effectEvery}
		w, err := queue.NewWorker(client, queue.WorkerConfig{
			ID:       fmt.Sprintf("soak-%d", i),
			Queues:   map[string]queue.QueueConfig{queue.DefaultQueue: {MaxWorkers: c.slots}},
			Handlers: map[string]queue.HandlerConfig{"soak": {Handler: queue.HandlerFunc(h.work)}},
			Maintenance: queue.MaintenanceConfig{
				CompletedRetention: c.retention, CleanInterval: c.cleanInterval,
			},
			Hooks:  queue.Hooks{Finished: l.finished, Maintained: l.maintained},
			Logger: logger,
		})
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, &soakWorker{pool: pool, worker: w})
	}
	return ws
}

// soakHandler does nothing but keep the ledger; one job in effectEvery
// (by id) stores its effect and completes in one transaction, as the
// chaos ledger jobs do.
type soakHandler struct {
	pool        *pgxpool.Pool
	ledger      *soakLedger
	effectEvery int64
}

func (h *soakHandler) work(ctx context.Context, t *queue.Task) error {
	h.ledger.started(t.Job.ID)
	if t.Job.ID%h.effectEvery != 0 {
		return nil
	}
	tx, err := h.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `INSERT INTO effects (job_id, attempt, worker_pid) VALUES ($1, $2, $3)`,
		t.Job.ID, t.Job.Attempt, os.Getpid()); err != nil {
		return fmt.Errorf("insert effect: %w", err)
	}
	if err := t.CompleteTx(ctx, tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// produce enqueues c.jobs at up to c.rate per second, in batches every
// 100 ms, skipping a batch while more than c.backlog jobs are unfinished.
// It returns the enqueue errors (there should be none).
func produce(ctx context.Context, client *queue.Client, c soakConfig, l *soakLedger) []error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	batch := max(c.rate/10, 1)
	var errs []error
	next := 0
	for next < c.jobs {
		select {
		case <-ctx.Done():
			return append(errs, ctx.Err())
		case <-tick.C:
		}
		if l.enqueued()-l.completed.Load() > int64(c.backlog) {
			continue
		}
		n := min(batch, c.jobs-next)
		ps := make([]*queue.EnqueueParams, n)
		for i := range ps {
			ps[i] = &queue.EnqueueParams{Kind: "soak", TenantID: fmt.Sprintf("tenant-%d", (next+i)%c.tenants)}
		}
		res, err := client.EnqueueMany(ctx, ps)
		if err != nil {
			if len(errs) < 20 {
				errs = append(errs, err)
			}
			continue
		}
		ids := make([]int64, len(res))
		for i, r := range res {
			ids[i] = r.Job.ID
		}
		l.ack(ids)
		next += n
	}
	return errs
}

// soakSampler reads the jobs table's sizes and statistics.
type soakSampler struct {
	pool    *pgxpool.Pool
	start   time.Time // the load's start, local clock
	startDB time.Time // the same instant, database clock
	claims  *claimRecorder
	ledger  *soakLedger
	prev    soakSample
}

const soakSampleSQL = `
SELECT pg_relation_size('docket_jobs'), pg_indexes_size('docket_jobs'), pg_total_relation_size('docket_jobs'),
       coalesce((SELECT pg_relation_size(c.oid) FROM pg_class c WHERE c.relname = 'docket_jobs_fetch'), 0),
       pg_total_relation_size('docket_job_attempts'),
       s.n_live_tup, s.n_dead_tup, s.autovacuum_count, s.autoanalyze_count, s.last_autovacuum
FROM pg_stat_user_tables s WHERE s.relid = 'docket_jobs'::regclass`

// take reads one sample at now, with the claims since the previous one.
func (s *soakSampler) take(ctx context.Context) (soakSample, error) {
	at := time.Since(s.start)
	x := soakSample{At: at, Enqueued: s.ledger.enqueued(), Completed: s.ledger.completed.Load(),
		Cleaned: s.ledger.cleaned.Load(), LastAutovacuumRel: math.NaN(), Load1: loadAverage()}
	var last *time.Time
	err := s.pool.QueryRow(ctx, soakSampleSQL).Scan(&x.HeapBytes, &x.IndexBytes, &x.TotalBytes, &x.FetchBytes,
		&x.AttemptsBytes, &x.LiveTup, &x.DeadTup, &x.Autovacuums, &x.Autoanalyzes, &last)
	if err != nil {
		return x, err
	}
	if last != nil {
		x.LastAutovacuum = *last
		x.LastAutovacuumRel = last.Sub(s.startDB).Seconds()
	}
	durs, failed := s.claims.window(s.prev.At, at)
	x.Claims, x.ClaimErrors = len(durs), failed
	x.ClaimP50, x.ClaimP99 = percentile(durs, 0.5), percentile(durs, 0.99)
	x.ClaimMax = percentile(durs, 1)
	if dt := (at - s.prev.At).Seconds(); dt > 0 {
		x.Throughput = float64(x.Completed-s.prev.Completed) / dt
	}
	s.prev = x
	return x, nil
}

// reindexFetch runs REINDEX CONCURRENTLY of the fetch index and checks
// the index afterwards.
func reindexFetch(ctx context.Context, pool *pgxpool.Pool, start time.Time, claims *claimRecorder) reindexResult {
	rx := reindexResult{Ran: true, From: time.Since(start)}
	_, rx.Err = pool.Exec(ctx, `REINDEX INDEX CONCURRENTLY docket_jobs_fetch`)
	rx.To = time.Since(start)
	durs, failed := claims.window(rx.From, rx.To)
	rx.ClaimsDuring, rx.FailuresDuring = len(durs), failed
	var valid bool
	var leftovers int
	err := pool.QueryRow(ctx, `
SELECT coalesce(bool_and(i.indisvalid) FILTER (WHERE c.relname = 'docket_jobs_fetch'), false),
       count(*) FILTER (WHERE c.relname LIKE 'docket_jobs_fetch_cc%')
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = 'docket_jobs'::regclass`).Scan(&valid, &leftovers)
	rx.Valid = err == nil && valid && leftovers == 0
	if err != nil && rx.Err == nil {
		rx.Err = fmt.Errorf("check the index: %w", err)
	}
	return rx
}

// loadAverage is the machine's 1-minute load average, NaN when unknown.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return math.NaN()
	}
	f, _, _ := strings.Cut(string(b), " ")
	v, err := strconv.ParseFloat(f, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}
