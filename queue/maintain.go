package queue

import (
	"context"
	"time"
)

// MaintenanceConfig configures the sweeps that one elected worker runs for
// all: rescuing expired leases, promoting scheduled jobs and deleting old
// finished jobs. The leader runs them as periodic tasks, with the periodic
// jobs (WorkerConfig.Periodic): each has a record in the store, named
// docket.rescue, docket.schedule and docket.clean (docket periodic list).
type MaintenanceConfig struct {
	// Disabled turns maintenance off in this worker.
	Disabled bool
	// LeaderTTL is how long a leader holds without renewing. Default 15s.
	LeaderTTL time.Duration
	// ElectInterval is how often leadership is sought or renewed.
	// Default LeaderTTL/3.
	ElectInterval time.Duration
	// RescueInterval is how often expired leases are rescued. Default
	// LeaseDuration/6, at least 100ms, at most 10s.
	RescueInterval time.Duration
	// ScheduleInterval is how often scheduled jobs are made pending.
	// Default 500ms.
	ScheduleInterval time.Duration
	// CleanInterval is how often finished jobs are deleted. Default 1m.
	CleanInterval time.Duration
	// Retention of finished jobs. Defaults: completed 24h, failed 7 days,
	// cancelled 24h.
	CompletedRetention time.Duration
	FailedRetention    time.Duration
	CancelledRetention time.Duration
}

const maintenanceBatch = 1000

func (c *MaintenanceConfig) setDefaults(lease time.Duration) {
	setDuration(&c.LeaderTTL, 15*time.Second)
	setDuration(&c.ElectInterval, c.LeaderTTL/3)
	setDuration(&c.RescueInterval, min(max(lease/6, 100*time.Millisecond), 10*time.Second))
	setDuration(&c.ScheduleInterval, 500*time.Millisecond)
	setDuration(&c.CleanInterval, time.Minute)
	setDuration(&c.CompletedRetention, 24*time.Hour)
	setDuration(&c.FailedRetention, 7*24*time.Hour)
	setDuration(&c.CancelledRetention, 24*time.Hour)
}

const leaderName = "maintenance"

// maintain seeks leadership and, while leading, runs the periodic tasks:
// the sweeps (maintenanceTasks) and the periodic jobs. It resigns when ctx
// ends.
func (w *Worker) maintain(ctx context.Context) {
	cfg := w.cfg.Maintenance
	leader := &LeaderParams{Name: leaderName, LeaderID: w.id, TTL: cfg.LeaderTTL}
	elect := time.NewTicker(cfg.ElectInterval)
	defer elect.Stop()
	runner := newPeriodicRunner(w, append(w.maintenanceTasks(), w.periodic...))
	due := time.NewTimer(0)
	defer due.Stop()

	leading := w.elect(ctx, leader, false)
	for {
		select {
		case <-ctx.Done():
			if leading {
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
				_ = w.exec.LeaderResign(rctx, leader) // best effort; the TTL ends it anyway
				cancel()
			}
			return
		case <-elect.C:
			was := leading
			if leading = w.elect(ctx, leader, leading); leading && !was {
				runner.reset() // another leader may have run ticks meanwhile
			}
		case <-due.C:
			if leading {
				runner.run(ctx)
			}
		}
		if leading {
			due.Reset(runner.delay(time.Now()))
		} else {
			due.Reset(cfg.ElectInterval)
		}
	}
}

// Names of the maintenance sweeps as periodic tasks (docket periodic list).
const (
	taskRescue   = reservedPrefix + "rescue"
	taskSchedule = reservedPrefix + "schedule"
	taskClean    = reservedPrefix + "clean"
)

// maintenanceTasks are the sweeps, run by the leader on the configured
// intervals through the periodic runner. Each tick is recorded before the
// sweep runs (at most once per tick: the sweeps are idempotent, so a lost
// tick is made up by the next).
func (w *Worker) maintenanceTasks() []*periodicTask {
	cfg := w.cfg.Maintenance
	sweep := func(name string, fn func(ctx context.Context) (int, error)) func(context.Context, Executor, time.Time) (func(), error) {
		return func(ctx context.Context, _ Executor, _ time.Time) (func(), error) {
			w.sweep(ctx, name, func() (int, error) { return fn(ctx) })
			return func() {}, nil
		}
	}
	tasks := []*periodicTask{
		{name: taskRescue, sched: every(cfg.RescueInterval), run: func(ctx context.Context, _ Executor, _ time.Time) (func(), error) {
			w.rescue(ctx)
			return func() {}, nil
		}},
		{name: taskSchedule, sched: every(cfg.ScheduleInterval), run: sweep("schedule", func(ctx context.Context) (int, error) {
			return w.exec.JobSchedule(ctx, &JobScheduleParams{Limit: maintenanceBatch})
		})},
		{name: taskClean, sched: every(cfg.CleanInterval), run: sweep("clean", func(ctx context.Context) (int, error) {
			return w.exec.JobDeleteFinished(ctx, &JobDeleteFinishedParams{
				CompletedAge: cfg.CompletedRetention, FailedAge: cfg.FailedRetention,
				CancelledAge: cfg.CancelledRetention, Limit: maintenanceBatch * 10,
			})
		})},
	}
	for _, t := range tasks {
		t.spec = t.sched.(every).String()
	}
	return tasks
}

func (w *Worker) elect(ctx context.Context, p *LeaderParams, was bool) bool {
	ok, err := w.exec.LeaderAttempt(ctx, p)
	if err != nil {
		if ctx.Err() == nil {
			w.logger.Warn("leader election failed", "error", err)
		}
		return false
	}
	if ok != was {
		w.logger.Info("maintenance leadership changed", "leading", ok)
	}
	return ok
}

func (w *Worker) rescue(ctx context.Context) {
	jobs, err := w.exec.JobRescue(ctx, &JobRescueParams{Limit: maintenanceBatch})
	if err != nil {
		if ctx.Err() == nil {
			w.logger.Warn("rescue failed", "error", err)
		}
		return
	}
	for _, j := range jobs {
		w.logger.Warn("rescued job with expired lease", "job_id", j.ID, "attempt", j.Attempt, "state", j.State)
		w.publish(EventRescued, j)
		if j.State == StatePending {
			w.wakeQueue(j.Queue)
		}
	}
	if w.cfg.Hooks.Maintained != nil {
		w.cfg.Hooks.Maintained("rescue", len(jobs))
	}
}

func (w *Worker) sweep(ctx context.Context, name string, fn func() (int, error)) {
	n, err := fn()
	if err != nil {
		if ctx.Err() == nil {
			w.logger.Warn("maintenance failed", "task", name, "error", err)
		}
		return
	}
	if n > 0 {
		w.logger.Debug("maintenance", "task", name, "jobs", n)
		for q := range w.cfg.Queues {
			w.wakeQueue(q)
		}
	}
	if w.cfg.Hooks.Maintained != nil {
		w.cfg.Hooks.Maintained(name, n)
	}
}
