package queue

import (
	"context"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// The maintenance services. Each runs its own periodic runner (runTasks),
// so its ticks are recorded in the store under its task name as before
// (docket periodic list), and each is started and stopped by leadership
// (leader.go).

// maintenanceServices returns a term's services: the sweeps, and the
// periodic enqueuer when periodic jobs are configured.
func (w *Worker) maintenanceServices() []service {
	svcs := []service{rescuer{w}, scheduler{w}, cleaner{w}}
	if len(w.periodic) > 0 {
		svcs = append(svcs, periodicEnqueuer{w})
	}
	return svcs
}

// rescuer returns the jobs whose lease ran out to pending (or fails
// them, out of attempts), every RescueInterval.
type rescuer struct{ w *Worker }

func (s rescuer) run(ctx context.Context) {
	s.w.runTasks(ctx, []*periodicTask{sweepTask(taskRescue, s.w.cfg.Maintenance.RescueInterval, s.w.rescue)})
}

// scheduler makes the scheduled jobs that are due pending, every
// ScheduleInterval.
type scheduler struct{ w *Worker }

func (s scheduler) run(ctx context.Context) {
	s.w.runTasks(ctx, []*periodicTask{sweepTask(taskSchedule, s.w.cfg.Maintenance.ScheduleInterval, func(ctx context.Context) {
		s.w.sweep(ctx, "schedule", maintenanceBatch, func() (int, error) {
			return s.w.exec.JobSchedule(ctx, &driver.JobScheduleParams{Limit: maintenanceBatch})
		})
	})})
}

// cleaner deletes the finished jobs past their retention, every
// CleanInterval, in batches of cleanBatch until none is left.
type cleaner struct{ w *Worker }

// cleanBatch is the most jobs one delete of the cleaner removes.
const cleanBatch = maintenanceBatch * 10

func (s cleaner) run(ctx context.Context) {
	cfg := s.w.cfg.Maintenance
	s.w.runTasks(ctx, []*periodicTask{sweepTask(taskClean, cfg.CleanInterval, func(ctx context.Context) {
		s.w.sweep(ctx, "clean", cleanBatch, func() (int, error) {
			return s.w.exec.JobDeleteFinished(ctx, &driver.JobDeleteFinishedParams{
				CompletedAge: cfg.CompletedRetention, FailedAge: cfg.FailedRetention,
				CancelledAge: cfg.CancelledRetention, Limit: cleanBatch,
			})
		})
	})})
}

// periodicEnqueuer enqueues the configured periodic jobs (WorkerConfig.
// Periodic), each tick once across processes (periodic_run.go).
type periodicEnqueuer struct{ w *Worker }

func (s periodicEnqueuer) run(ctx context.Context) { s.w.runTasks(ctx, s.w.periodic) }

// sweepTask is a sweep as a periodic task: recorded first, then run (at
// most once per tick: the sweeps are idempotent, so a lost tick is made up
// by the next).
func sweepTask(name string, interval time.Duration, sweep func(ctx context.Context)) *periodicTask {
	return &periodicTask{name: name, spec: every(interval).String(), sched: every(interval),
		run: func(ctx context.Context, _ driver.Executor, _ time.Time) (func(), error) {
			sweep(ctx)
			return func() {}, nil
		}}
}
