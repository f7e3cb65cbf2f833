package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docketq/docket/queue"
)

// benchKind is the job kind every scenario enqueues.
const benchKind = "bench"

// insertBatch is how many jobs one EnqueueMany carries when loading.
const insertBatch = 5000

// stallTimeout fails a scenario that makes no progress for this long.
const stallTimeout = 60 * time.Second

// newClient returns a client on the scenario's store whose queue lets each
// tenant run limit jobs at once.
func (r *runner) newClient(ctx context.Context, limit int) (*queue.Client, error) {
	c := queue.NewClient(r.env.Driver, queue.ClientConfig{Logger: r.cfg.Logger})
	if err := c.SetQueueDefaultLimit(ctx, queue.DefaultQueue, limit); err != nil {
		return nil, fmt.Errorf("set tenant limit: %w", err)
	}
	return c, nil
}

// workerConfig is the tuned configuration of one worker.
func (r *runner) workerConfig(maxWorkers int, h queue.HandlerFunc, hooks queue.Hooks) queue.WorkerConfig {
	return queue.WorkerConfig{
		Queues:        map[string]queue.QueueConfig{queue.DefaultQueue: {MaxWorkers: maxWorkers, Claimers: min(r.cfg.Claimers, maxWorkers)}},
		Completers:    r.cfg.Completers,
		Handlers:      map[string]queue.HandlerConfig{benchKind: {Handler: h}},
		PollInterval:  r.cfg.PollInterval,
		FetchCooldown: r.cfg.FetchCooldown,
		ShutdownGrace: 5 * time.Second,
		Logger:        r.cfg.Logger,
		Hooks:         hooks,
	}
}

// settings records the worker settings every scenario shares.
func (r *runner) settings(res *Result, workers string) {
	res.set("store", r.env.Describe)
	res.set("workers", workers)
	res.set("poll_interval", r.cfg.PollInterval.String())
	res.set("fetch_cooldown", r.cfg.FetchCooldown.String())
	res.set("claimers", orDefault(r.cfg.Claimers))
	res.set("completers", orDefault(r.cfg.Completers))
	res.set("gomaxprocs", runtime.GOMAXPROCS(0))
}

// orDefault names a setting left to the engine's default.
func orDefault(n int) any {
	if n == 0 {
		return "default"
	}
	return n
}

// workers runs queue workers until stop is called.
type workers struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	err    error
}

// startWorkers starts one worker per config, all on client.
func startWorkers(ctx context.Context, client *queue.Client, cfgs ...queue.WorkerConfig) (*workers, error) {
	built := make([]*queue.Worker, len(cfgs))
	for i, cfg := range cfgs {
		w, err := queue.NewWorker(client, cfg)
		if err != nil {
			return nil, err
		}
		built[i] = w
	}
	ctx, cancel := context.WithCancel(ctx)
	ws := &workers{cancel: cancel}
	for _, w := range built {
		ws.wg.Go(func() {
			if err := w.Run(ctx); err != nil {
				ws.mu.Lock()
				ws.err = errors.Join(ws.err, err)
				ws.mu.Unlock()
			}
		})
	}
	return ws, nil
}

// stop shuts the workers down and waits for them.
func (ws *workers) stop() error {
	ws.cancel()
	ws.wg.Wait()
	return ws.err
}

// tally counts finished jobs and remembers when the last one finished.
type tally struct {
	n    atomic.Int64
	last atomic.Int64 // unix nanoseconds of the last finish
}

func (t *tally) hook(_ *queue.Job, outcome queue.Outcome, _ error) {
	if outcome == queue.OutcomeCompleted {
		t.n.Add(1)
		t.last.Store(time.Now().UnixNano())
	}
}

// waitFor waits until count() reaches target, reporting the rate every
// second to the progress writer. It fails when ctx ends or when the count
// stands still for stallTimeout.
func (r *runner) waitFor(ctx context.Context, count func() int64, target int64) error {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	report := time.NewTicker(time.Second)
	defer report.Stop()
	last, lastChange, lastReport := count(), time.Now(), int64(0)
	for last < target {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-report.C:
			r.progressf("%d done (%d/s)", last, last-lastReport)
			lastReport = last
			continue
		case <-tick.C:
		}
		if n := count(); n != last {
			last, lastChange = n, time.Now()
		} else if time.Since(lastChange) > stallTimeout {
			return fmt.Errorf("stalled at %d of %d jobs for %s", n, target, stallTimeout)
		}
	}
	return nil
}

// enqueueSpread inserts n jobs spread round-robin over tenants, in batches,
// on two connections at once. It returns the time it took.
func enqueueSpread(ctx context.Context, c *queue.Client, n, tenants int, offset int) (time.Duration, error) {
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for g := range errs {
		wg.Go(func() {
			for {
				from := int(next.Add(insertBatch)) - insertBatch
				if from >= n || ctx.Err() != nil {
					return
				}
				to := min(from+insertBatch, n)
				if _, err := c.EnqueueMany(ctx, spreadParams(from+offset, to+offset, tenants)); err != nil {
					errs[g] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start), errors.Join(errs...)
}

// spreadParams returns no-op jobs numbered from to to-1, job i going to
// tenant i mod tenants.
func spreadParams(from, to, tenants int) []*queue.EnqueueParams {
	ps := make([]*queue.EnqueueParams, 0, to-from)
	for i := from; i < to; i++ {
		ps = append(ps, &queue.EnqueueParams{Kind: benchKind, TenantID: tenantName(i % tenants), Args: emptyArgs})
	}
	return ps
}

var emptyArgs = json.RawMessage(`{}`)

func tenantName(i int) string { return "t" + strconv.Itoa(i) }

// seqArgs carries a job's sequence number, to match its start with the
// time it was enqueued.
type seqArgs struct {
	Seq int `json:"seq"`
}

func seqOf(job *queue.Job) (int, bool) {
	var a seqArgs
	if err := json.Unmarshal(job.Args, &a); err != nil {
		return 0, false
	}
	return a.Seq, true
}

// percentile returns the p-th percentile (0-100, nearest rank) of sorted
// durations in milliseconds, or NaN when there are none.
func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return ms(sorted[rank-1])
}

// addPercentiles sorts ds and adds prefix+"p50_ms" and the like.
func addPercentiles(res *Result, prefix string, ds []time.Duration, ps ...float64) {
	slices.Sort(ds)
	for _, p := range ps {
		res.add(fmt.Sprintf("%sp%g_ms", prefix, p), percentile(ds, p))
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func noop(context.Context, *queue.Task) error { return nil }
