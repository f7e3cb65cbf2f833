package queue

import (
	"context"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// MaintenanceConfig configures the sweeps that one elected worker runs for
// all: rescuing expired leases, promoting scheduled jobs and deleting old
// finished jobs. The leader runs each as a service, beside the periodic
// jobs' enqueuer (WorkerConfig.Periodic): each sweep has a record in the
// store, named docket.rescue, docket.schedule and docket.clean (docket
// periodic list).
type MaintenanceConfig struct {
	// Disabled turns maintenance off in this worker.
	Disabled bool
	// LeaderTTL is how long a leader holds without renewing. Default 15s.
	LeaderTTL time.Duration
	// ElectInterval is how often leadership is sought or renewed, shorter
	// than LeaderTTL/2. Default LeaderTTL/3.
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
	// HostClock is this host's wall clock; nil: time.Now. Leases,
	// scheduled jobs and periodic ticks all follow the store's clock: the
	// leader reads it (Executor.Now) every minute and counts the time in
	// between on the monotonic clock, so this one is read only until the
	// store's first answers (a step of it changes nothing after). Tests set
	// it to skew one worker's clock against the others', or jump it
	// (the clock-skew tests); applications leave it nil.
	HostClock func() time.Time
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

// maintain seeks leadership and, while leading, runs the maintenance
// services (maintenanceServices). It resigns when ctx ends.
func (w *Worker) maintain(ctx context.Context) {
	cfg := w.cfg.Maintenance
	leader := &driver.LeaderParams{Name: leaderName, LeaderID: w.id, TTL: cfg.LeaderTTL}
	elect := time.NewTicker(cfg.ElectInterval)
	defer elect.Stop()
	hold := leaderHold(cfg.LeaderTTL, cfg.ElectInterval)
	l := &leadership{
		attempt: func(ctx context.Context, leading bool) bool { return w.elect(ctx, leader, leading) },
		resign: func(ctx context.Context) {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			defer cancel()
			_ = w.exec.LeaderResign(rctx, leader) // best effort; the TTL ends it anyway
		},
		tick:      elect.C,
		services:  w.maintenanceServices,
		hold:      hold,
		afterFunc: afterFunc,
		lapsed: func() {
			w.logger.Warn("maintenance paused: no leadership renewal succeeded within its hold; the lease may lapse",
				"hold", hold)
		},
	}
	l.run(ctx)
}

// Names of the maintenance sweeps as periodic tasks (docket periodic list).
const (
	taskRescue   = reservedPrefix + "rescue"
	taskSchedule = reservedPrefix + "schedule"
	taskClean    = reservedPrefix + "clean"
)

func (w *Worker) elect(ctx context.Context, p *driver.LeaderParams, was bool) bool {
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

// rescue is the rescuer's sweep: batches of maintenanceBatch until one
// comes back short.
func (w *Worker) rescue(ctx context.Context) {
	total := 0
	for {
		jobs, err := w.exec.JobRescue(ctx, &driver.JobRescueParams{Limit: maintenanceBatch})
		if err != nil {
			if ctx.Err() == nil {
				w.logger.Warn("rescue failed", "error", err)
			}
			break
		}
		for _, j := range jobs {
			w.logger.Warn("rescued job with expired lease", "job_id", j.ID, "attempt", j.Attempt, "state", j.State)
			w.publish(EventRescued, j)
			if j.State == StatePending {
				w.wakeQueue(j.Queue)
			}
			if j.ParentID != 0 && j.State.Finished() {
				w.wakeClaimers("") // its parent, in any queue, may be pending again
			}
		}
		total += len(jobs)
		if len(jobs) < maintenanceBatch || ctx.Err() != nil {
			break
		}
	}
	if w.cfg.Hooks.Maintained != nil {
		w.cfg.Hooks.Maintained("rescue", total)
	}
}

// sweep runs fn, one batch of at most limit jobs, again while batches
// come back full, so that one tick clears everything due and not one
// batch of it: a sustained rate above a batch per interval would
// otherwise grow the backlog (of finished jobs, for the cleaner) without
// bound, as the churn soak found (docs/reliability.md). Each
// batch is a transaction of its own.
func (w *Worker) sweep(ctx context.Context, name string, limit int, fn func() (int, error)) {
	total := 0
	for {
		n, err := fn()
		if err != nil {
			if ctx.Err() == nil {
				w.logger.Warn("maintenance failed", "task", name, "error", err)
			}
			if total == 0 {
				return
			}
			break
		}
		total += n
		if n < limit || ctx.Err() != nil {
			break
		}
	}
	if total > 0 {
		w.logger.Debug("maintenance", "task", name, "jobs", total)
		for q := range w.cfg.Queues {
			w.wakeQueue(q)
		}
	}
	if w.cfg.Hooks.Maintained != nil {
		w.cfg.Hooks.Maintained(name, total)
	}
}
