package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docketq/docket/queue"
)

// runDrain pre-inserts Jobs no-op jobs across Tenants tenants and times one
// worker working them all, from its start to the last stored completion.
func runDrain(ctx context.Context, r *runner) (*Result, error) {
	n, tenants, slots := r.cfg.jobsOr(100_000), r.cfg.Tenants, r.cfg.Workers
	// The limit never binds: no tenant can run more than the slots anyway.
	client, err := r.newClient(ctx, slots)
	if err != nil {
		return nil, err
	}
	r.progressf("inserting %d jobs across %d tenants", n, tenants)
	took, err := enqueueSpread(ctx, client, n, tenants, 0)
	if err != nil {
		return nil, err
	}
	var done tally
	ws, err := startWorkers(ctx, client, r.workerConfig(slots, noop, queue.Hooks{Finished: done.hook}))
	if err != nil {
		return nil, err
	}
	start := time.Now()
	r.progressf("working")
	err = r.waitFor(ctx, done.n.Load, int64(n))
	if err = errors.Join(err, ws.stop()); err != nil {
		return nil, err
	}
	secs := time.Unix(0, done.last.Load()).Sub(start).Seconds()
	res := &Result{}
	res.add("jobs_per_sec", float64(n)/secs)
	res.add("jobs", n)
	res.add("tenants", tenants)
	res.add("seconds", secs)
	res.add("insert_jobs_per_sec", float64(n)/took.Seconds())
	r.settings(res, strconv.Itoa(slots))
	res.set("tenant_limit", slots)
	return res, nil
}

// steadyBatch is the size of each steady producer's inserts.
const (
	steadyBatch     = 1000
	steadyProducers = 4
)

// runSteady pre-fills a backlog, then inserts (several producers, batched)
// and works jobs at the same time for Warmup and then Duration, keeping
// the backlog topped up. It reports the completion rate over Duration:
// the system under way, not its start (a client's start-up counted in a
// 10 s window made River's rate 10-20 % lower than over 30 s, while
// docket's did not change, docs/benchmarks.md).
func runSteady(ctx context.Context, r *runner) (*Result, error) {
	tenants, slots, backlog := r.cfg.Tenants, r.cfg.Workers, r.cfg.Backlog
	client, err := r.newClient(ctx, slots)
	if err != nil {
		return nil, err
	}
	r.progressf("pre-filling %d jobs", backlog)
	if _, err := enqueueSpread(ctx, client, backlog, tenants, 0); err != nil {
		return nil, err
	}
	var done tally
	var inserted, insertErrors atomic.Int64
	inserted.Store(int64(backlog))
	ws, err := startWorkers(ctx, client, r.workerConfig(slots, noop, queue.Hooks{Finished: done.hook}))
	if err != nil {
		return nil, err
	}
	pctx, stopProducers := context.WithCancel(ctx)
	var wg sync.WaitGroup
	errs := make([]error, steadyProducers)
	prod := &producer{client: client, tenants: tenants, backlog: int64(backlog), inserted: &inserted, done: &done, errors: &insertErrors}
	for i := range steadyProducers {
		wg.Go(func() { errs[i] = prod.run(pctx) })
	}
	r.warmUp(ctx, "", done.n.Load)
	counted, start := done.n.Load(), time.Now()
	r.progressf("inserting and working for %s", r.cfg.Duration)
	wctx, stopWait := context.WithTimeout(ctx, r.cfg.Duration)
	_ = r.waitFor(wctx, done.n.Load, math.MaxInt64) // reports the rate every second
	stopWait()
	completed, total := done.n.Load(), inserted.Load()
	secs := time.Since(start).Seconds()
	stopProducers()
	wg.Wait()
	if err := errors.Join(ctx.Err(), errors.Join(errs...), ws.stop()); err != nil {
		return nil, err
	}
	res := &Result{}
	res.add("jobs_per_sec", float64(completed-counted)/secs)
	res.add("completed", completed)
	res.add("inserted", total-int64(backlog))
	res.add("backlog", total-completed)
	res.add("seconds", secs)
	res.add("insert_errors", insertErrors.Load())
	r.settings(res, strconv.Itoa(slots))
	res.set("tenants", tenants)
	res.set("producers", steadyProducers)
	res.set("insert_batch", steadyBatch)
	res.set("backlog_target", backlog)
	res.set("warmup", r.cfg.Warmup.String())
	return res, nil
}

// warmUp lets steady (or fleet's steady phase) work for Warmup before it
// counts, reporting the rate of done as it goes: the rate counted is that
// of the system under way, not of its start.
func (r *runner) warmUp(ctx context.Context, label string, done func() int64) {
	if r.cfg.Warmup <= 0 {
		return
	}
	r.progressf("%sinserting and working for %s before counting", label, r.cfg.Warmup)
	wctx, stop := context.WithTimeout(ctx, r.cfg.Warmup)
	defer stop()
	_ = r.waitFor(wctx, done, math.MaxInt64)
}

// steadyMaxErrors is how many failed inserts steady tolerates (each is
// retried and counted) before it gives up.
const steadyMaxErrors = 100

// producer inserts batches while the backlog is under its target.
type producer struct {
	client   *queue.Client
	tenants  int
	backlog  int64
	inserted *atomic.Int64
	done     *tally
	errors   *atomic.Int64 // failed inserts, retried
}

func (p *producer) run(ctx context.Context) error {
	for ctx.Err() == nil {
		if p.inserted.Load()-p.done.n.Load() >= p.backlog {
			if !sleep(ctx, 2*time.Millisecond) {
				return nil
			}
			continue
		}
		from := int(p.inserted.Add(steadyBatch)) - steadyBatch
		for {
			_, err := p.client.EnqueueMany(ctx, spreadParams(from, from+steadyBatch, p.tenants))
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				p.inserted.Add(-steadyBatch)
				return nil
			}
			if p.errors.Add(1) > steadyMaxErrors {
				return fmt.Errorf("%d inserts failed, the last: %w", steadyMaxErrors, err)
			}
		}
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
