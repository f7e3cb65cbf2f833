package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// benchArgs are the no-op job's arguments; Seq matches a start with its
// enqueue in latency.
type benchArgs struct {
	Seq int `json:"seq"`
}

func (benchArgs) Kind() string { return "bench" }

// benchWorker does nothing but report its start to onStart, when set.
type benchWorker struct {
	river.WorkerDefaults[benchArgs]
	onStart func(seq int, at time.Time)
}

func (w *benchWorker) Work(_ context.Context, job *river.Job[benchArgs]) error {
	if w.onStart != nil {
		w.onStart(job.Args.Seq, time.Now())
	}
	return nil
}

const (
	insertBatch     = 5000
	steadyBacklog   = 20_000
	steadyBatch     = 1000
	steadyProducers = 4
	stallTimeout    = 60 * time.Second
	steadyMaxErrors = 100
)

// bench is a River client working the default queue with a no-op worker,
// and a count of the completions it has stored.
type bench struct {
	client *river.Client[pgx.Tx]
	done   atomic.Int64
	last   atomic.Int64 // unix nanoseconds of the last completion
	events <-chan *river.Event
	stop   func()
}

func newBench(cfg *config, pool *pgxpool.Pool, onStart func(int, time.Time)) (*bench, error) {
	workers := river.NewWorkers()
	river.AddWorker(workers, &benchWorker{onStart: onStart})
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		FetchCooldown:     cfg.fetchCooldown,
		FetchPollInterval: cfg.pollInterval,
		Logger:            cfg.logger,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.workers}},
		Workers:           workers,
	})
	if err != nil {
		return nil, err
	}
	// Completions are counted from the subscription, after the completer
	// stored them, as docket bench counts them.
	events, stop := client.SubscribeConfig(&river.SubscribeConfig{
		ChanSize: 200_000, Kinds: []river.EventKind{river.EventKindJobCompleted},
	})
	return &bench{client: client, events: events, stop: stop}, nil
}

// count consumes completion events until the subscription ends.
func (b *bench) count() {
	for range b.events {
		b.done.Add(1)
		b.last.Store(time.Now().UnixNano())
	}
}

func (b *bench) start(ctx context.Context) (func() error, error) {
	if err := b.client.Start(ctx); err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	wg.Go(b.count)
	return func() error {
		err := b.client.Stop(context.WithoutCancel(ctx))
		b.stop()
		wg.Wait()
		return err
	}, nil
}

func insertMany(ctx context.Context, client *river.Client[pgx.Tx], from, to int) error {
	ps := make([]river.InsertManyParams, 0, to-from)
	for i := from; i < to; i++ {
		ps = append(ps, river.InsertManyParams{Args: benchArgs{Seq: i}})
	}
	_, err := client.InsertMany(ctx, ps)
	return err
}

// runDrain inserts jobs, then times the client working them all.
func runDrain(ctx context.Context, cfg *config, db *database) (*result, error) {
	b, err := newBench(cfg, db.pool, nil)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.progress, "riverbench drain: inserting %d jobs\n", cfg.jobs)
	began := time.Now()
	for from := 0; from < cfg.jobs; from += insertBatch {
		if err := insertMany(ctx, b.client, from, min(from+insertBatch, cfg.jobs)); err != nil {
			return nil, err
		}
	}
	took := time.Since(began)
	start := time.Now()
	stop, err := b.start(ctx)
	if err != nil {
		return nil, err
	}
	err = waitFor(ctx, b.done.Load, int64(cfg.jobs))
	if err = errors.Join(err, stop()); err != nil {
		return nil, err
	}
	secs := time.Unix(0, b.last.Load()).Sub(start).Seconds()
	res := &result{}
	res.add("jobs_per_sec", float64(cfg.jobs)/secs)
	res.add("jobs", cfg.jobs)
	res.add("tenants", 0)
	res.add("seconds", secs)
	res.add("insert_jobs_per_sec", float64(cfg.jobs)/took.Seconds())
	return res, nil
}

// runSteady pre-fills a backlog, then inserts and works for the duration.
func runSteady(ctx context.Context, cfg *config, db *database) (*result, error) {
	b, err := newBench(cfg, db.pool, nil)
	if err != nil {
		return nil, err
	}
	for from := 0; from < steadyBacklog; from += insertBatch {
		if err := insertMany(ctx, b.client, from, min(from+insertBatch, steadyBacklog)); err != nil {
			return nil, err
		}
	}
	var inserted, insertErrors atomic.Int64
	inserted.Store(steadyBacklog)
	stop, err := b.start(ctx)
	if err != nil {
		return nil, err
	}
	pctx, stopProducers := context.WithCancel(ctx)
	var wg sync.WaitGroup
	errs := make([]error, steadyProducers)
	for p := range steadyProducers {
		wg.Go(func() { errs[p] = b.produce(pctx, &inserted, &insertErrors) })
	}
	if cfg.warmup > 0 {
		fmt.Fprintf(cfg.progress, "riverbench steady: inserting and working for %s before counting\n", cfg.warmup)
		sleep(ctx, cfg.warmup)
	}
	// As docket bench counts: from the warm-up's end, the client's start
	// (which this window used to include) long past.
	counted, start := b.done.Load(), time.Now()
	fmt.Fprintf(cfg.progress, "riverbench steady: inserting and working for %s\n", cfg.duration)
	sleep(ctx, cfg.duration)
	completed, total := b.done.Load(), inserted.Load()
	secs := time.Since(start).Seconds()
	stopProducers()
	wg.Wait()
	if err := errors.Join(ctx.Err(), errors.Join(errs...), stop()); err != nil {
		return nil, err
	}
	res := &result{}
	res.add("jobs_per_sec", float64(completed-counted)/secs)
	res.add("completed", completed)
	res.add("inserted", total-steadyBacklog)
	res.add("backlog", total-completed)
	res.add("seconds", secs)
	res.add("insert_errors", insertErrors.Load())
	res.set("producers", steadyProducers)
	res.set("insert_batch", steadyBatch)
	res.set("backlog_target", steadyBacklog)
	res.set("warmup", cfg.warmup.String())
	return res, nil
}

// produce inserts batches while the backlog is under its target. A failed
// insert is retried and counted in errs.
func (b *bench) produce(ctx context.Context, inserted, errs *atomic.Int64) error {
	for ctx.Err() == nil {
		if inserted.Load()-b.done.Load() >= steadyBacklog {
			sleep(ctx, 2*time.Millisecond)
			continue
		}
		from := int(inserted.Add(steadyBatch)) - steadyBatch
		for {
			err := insertMany(ctx, b.client, from, from+steadyBatch)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				inserted.Add(-steadyBatch)
				return nil
			}
			if errs.Add(1) > steadyMaxErrors {
				return fmt.Errorf("%d inserts failed, the last: %w", steadyMaxErrors, err)
			}
		}
	}
	return nil
}

// waitFor waits until count() reaches target, failing when ctx ends or the
// count stands still for stallTimeout.
func waitFor(ctx context.Context, count func() int64, target int64) error {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	last, lastChange := count(), time.Now()
	for last < target {
		select {
		case <-ctx.Done():
			return ctx.Err()
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

func randomPause() time.Duration {
	return 5*time.Millisecond + time.Duration(rand.Int64N(int64(10*time.Millisecond)))
}

// percentiles adds prefix+"p50_ms" and the like (nearest rank) of ds.
func percentiles(res *result, prefix string, ds []time.Duration, ps ...float64) {
	slices.Sort(ds)
	for _, p := range ps {
		v := math.NaN()
		if len(ds) > 0 {
			rank := min(max(int(math.Ceil(p/100*float64(len(ds)))), 1), len(ds))
			v = float64(ds[rank-1]) / float64(time.Millisecond)
		}
		res.add(fmt.Sprintf("%sp%g_ms", prefix, p), v)
	}
}
