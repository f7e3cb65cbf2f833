package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// periodicRetry is how long a task whose tick failed waits before trying
// again (a store error, or a job its Params made invalid).
const periodicRetry = 5 * time.Second

// periodicRunner runs periodic tasks while its worker leads: it keeps
// each task's next tick as last read from the store and, when one is due,
// records it there with a compare-and-set and runs it. Each maintenance
// service has its own, for one term of leadership (runTasks).
type periodicRunner struct {
	w     *Worker
	tasks []*periodicTask
	next  []time.Time // per task: the tick due next, as the store has it
	wait  []time.Time // per task: no try before this (after a failure)
	// synced: next holds the store's records; false at first and after
	// losing a compare-and-set.
	synced  bool
	retryAt time.Time // when to sync again after a failed sync
	// clock is the store's: stored ticks, written by whichever process
	// led, fall due by it, never by this host's clock (store_clock.go).
	clock storeClock
}

func newPeriodicRunner(w *Worker, tasks []*periodicTask) *periodicRunner {
	host := w.cfg.Maintenance.HostClock
	if host == nil {
		host = time.Now
	}
	return &periodicRunner{w: w, tasks: tasks, next: make([]time.Time, len(tasks)), wait: make([]time.Time, len(tasks)),
		clock: storeClock{read: w.exec.Now, host: host}}
}

// runTasks runs tasks until ctx ends: a maintenance service's loop. A
// fresh runner reads the store first, so ticks another leader ran
// meanwhile are not run again.
func (w *Worker) runTasks(ctx context.Context, tasks []*periodicTask) {
	r := newPeriodicRunner(w, tasks)
	due := time.NewTimer(0)
	defer due.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-due.C:
		}
		r.run(ctx)
		due.Reset(r.delay(r.clock.now()))
	}
}

// delay is how long to sleep before the next due tick.
func (r *periodicRunner) delay(now time.Time) time.Duration {
	if !r.synced {
		return max(r.retryAt.Sub(now), 0)
	}
	d := time.Minute // a bound, against clock jumps
	for i := range r.tasks {
		at := r.next[i]
		if r.wait[i].After(at) {
			at = r.wait[i]
		}
		d = min(d, at.Sub(now))
	}
	return max(d, 0)
}

// run runs every task whose tick is due.
func (r *periodicRunner) run(ctx context.Context) {
	now := r.clock.sync(ctx)
	if r.clock.readAt.IsZero() {
		// The store's clock has not answered yet, and the host's may be
		// off by any amount: ticks run or recorded by it could be early
		// (a periodic job run before its time) or far ahead (a sweep's
		// next tick recorded an hour into the store's future, the sweep
		// then stopped for that hour). Only the sweeps run meanwhile,
		// unrecorded, as when the records cannot be read.
		r.retryAt = now.Add(time.Second)
		r.sweepUnrecorded(ctx, now)
		return
	}
	if !r.synced {
		if err := r.sync(ctx, now); err != nil {
			if ctx.Err() == nil {
				r.w.logger.Warn("periodic tasks: read the store", "error", err)
			}
			r.retryAt = now.Add(time.Second)
			r.sweepUnrecorded(ctx, now)
			return
		}
	}
	for i, t := range r.tasks {
		if now.Before(r.next[i]) || now.Before(r.wait[i]) || ctx.Err() != nil {
			continue
		}
		if err := r.runTick(ctx, i, t, now); err != nil {
			if ctx.Err() == nil {
				r.w.logger.Warn("periodic task failed", "task", t.name, "error", err)
			}
			r.wait[i] = now.Add(min(periodicRetry, r.w.cfg.Maintenance.ElectInterval))
		}
	}
}

// sweepUnrecorded runs the due sweeps on this process's own schedule while
// the store's records cannot be read: the sweeps must go on even then (they
// are idempotent, so a sweep run twice does no harm). Periodic jobs wait for
// the records.
func (r *periodicRunner) sweepUnrecorded(ctx context.Context, now time.Time) {
	for i, t := range r.tasks {
		switch {
		case t.exact:
		case r.next[i].IsZero():
			r.next[i] = storeTime(t.sched.Next(now))
		case !now.Before(r.next[i]):
			tick, _ := latestTick(t.sched, r.next[i], now)
			r.next[i] = storeTime(t.sched.Next(tick))
			if after, err := t.run(ctx, r.w.exec, tick); err == nil {
				after()
			}
		}
	}
}

// sync registers the tasks and reads their next ticks from the store.
func (r *periodicRunner) sync(ctx context.Context, now time.Time) error {
	ps := make([]*driver.PeriodicRegisterParams, len(r.tasks))
	for i, t := range r.tasks {
		ps[i] = &driver.PeriodicRegisterParams{Name: t.name, Schedule: t.spec, NextRun: storeTime(t.sched.Next(now))}
	}
	recs, err := r.w.exec.PeriodicRegister(ctx, ps)
	if err != nil {
		return err
	}
	for i, rec := range recs {
		r.next[i] = rec.NextRun
	}
	r.synced = true
	return nil
}

// runTick runs the latest due tick of task i (see latestTick) and records
// it, in one transaction for exact tasks. Losing the compare-and-set means
// another process ran the tick: the runner then reads the store again.
func (r *periodicRunner) runTick(ctx context.Context, i int, t *periodicTask, now time.Time) error {
	expect := r.next[i]
	tick, missed := latestTick(t.sched, expect, now)
	next := storeTime(t.sched.Next(tick))
	if next.IsZero() {
		r.wait[i] = now.Add(24 * time.Hour) // the schedule ended; a restart re-reads it
		return fmt.Errorf("schedule %q has no tick after %s", t.spec, tick.Format(time.RFC3339))
	}
	adv := &driver.PeriodicAdvanceParams{Name: t.name, Schedule: t.spec, Expect: expect, Tick: tick, NextRun: next, Missed: missed,
		TxIdleLimit: r.w.cfg.Maintenance.LeaderTTL}
	if !t.exact {
		ok, err := r.w.exec.PeriodicAdvance(ctx, adv)
		switch {
		case err != nil && ctx.Err() != nil:
			return err
		case err != nil: // sweep all the same, unrecorded (see sweepUnrecorded)
			r.synced = false
			r.w.logger.Warn("periodic task: record the tick", "task", t.name, "error", err)
		case !ok: // another process ran the tick
			r.synced = false
			return nil
		}
		r.next[i] = next
		after, err := t.run(ctx, r.w.exec, tick)
		if err == nil {
			after()
		}
		return err
	}
	after, ok, err := r.exactly(ctx, t, adv)
	switch {
	case err != nil:
		r.synced = false
		return err
	case !ok:
		r.synced = false
		return nil
	}
	r.next[i] = next
	if missed > 0 {
		r.w.logger.Info("periodic job late: missed ticks run once", "task", t.name, "tick", tick, "missed", missed)
	}
	after()
	return nil
}

// exactly records the tick and runs the task in one transaction.
func (r *periodicRunner) exactly(ctx context.Context, t *periodicTask, adv *driver.PeriodicAdvanceParams) (func(), bool, error) {
	tx, err := r.w.exec.Begin(ctx)
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	ok, err := tx.PeriodicAdvance(ctx, adv)
	if err != nil || !ok {
		return nil, false, err
	}
	after, err := t.run(ctx, tx, adv.Tick)
	if err != nil {
		return nil, false, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, false, err
	}
	return after, true, nil
}

// storeTime is t as the stores keep it: UTC, to the microsecond.
func storeTime(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(time.Microsecond)
}

// enqueueTick is the run function of a periodic job: it inserts the job
// of the tick with x, inside the transaction that records the tick, and
// publishes it once that commits.
func (w *Worker) enqueueTick(j *PeriodicJob) func(ctx context.Context, x driver.Executor, tick time.Time) (func(), error) {
	return func(ctx context.Context, x driver.Executor, tick time.Time) (func(), error) {
		p, err := periodicParams(j, tick)
		if err != nil {
			return nil, err
		}
		if p == nil {
			return nil, fmt.Errorf("%w: Params returned no job", ErrInvalid)
		}
		ip, err := p.toInsert()
		if err != nil {
			return nil, err
		}
		res, err := x.JobInsertMany(ctx, []*driver.JobInsertParams{ip})
		if err != nil {
			return nil, fmt.Errorf("enqueue: %w", err)
		}
		return func() {
			for _, r := range res {
				if !r.Duplicate {
					w.publish(EventInserted, r.Job)
				}
			}
		}, nil
	}
}

// periodicParams calls j.Params, the application's function, and turns a
// panic into an error: the tick then fails as one whose job is invalid
// does (logged, not recorded, tried again), where the panic ended the
// leader's process, and each worker's in turn as it took the lead
// (TestWorker_PeriodicParamsPanicRecovered).
func periodicParams(j *PeriodicJob, tick time.Time) (p *EnqueueParams, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: periodic job %q: Params panicked: %v", ErrInvalid, j.Name, v)
		}
	}()
	return j.Params(tick), nil
}

// periodicTasks validates the configured periodic jobs and returns their
// tasks.
func (w *Worker) periodicTasks() ([]*periodicTask, error) {
	if len(w.cfg.Periodic) > 0 && w.cfg.Maintenance.Disabled {
		return nil, fmt.Errorf("%w: periodic jobs need maintenance: the leader enqueues them", ErrInvalid)
	}
	tasks, err := periodicTasks(w.cfg.Periodic)
	if err != nil {
		return nil, err
	}
	for _, t := range tasks {
		t.run = w.enqueueTick(t.job)
	}
	return tasks, nil
}
