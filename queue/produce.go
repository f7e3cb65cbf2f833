package queue

import (
	"context"
	"time"
)

// claimBatchMax caps how many jobs one claim asks for.
const claimBatchMax = 1000

// produce claims jobs of one queue while it has free slots and work, and
// otherwise waits for a notification, a freed slot or the poll interval.
func (w *Worker) produce(ctx context.Context, queue string) {
	maxWorkers := w.cfg.Queues[queue].MaxWorkers
	poll := time.NewTimer(w.cfg.PollInterval)
	defer poll.Stop()
	var (
		backoff   time.Duration
		lastClaim time.Time
	)
	for {
		free := maxWorkers - w.active.running(queue)
		if free > 0 {
			want := min(free, claimBatchMax)
			lastClaim = time.Now()
			jobs, err := w.claim(ctx, queue, want)
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				backoff = min(max(2*backoff, 50*time.Millisecond), 2*time.Second)
				w.logger.Warn("claim failed; backing off", "queue", queue, "error", err, "backoff", backoff)
				if !sleepCtx(ctx, backoff) {
					return
				}
				continue
			}
			backoff = 0
			if len(jobs) == want {
				// All we asked for: more work is likely; claim again as
				// soon as slots free up, after the cooldown.
				if !sleepCtx(ctx, w.cfg.FetchCooldown) {
					return
				}
				if w.active.running(queue) < maxWorkers {
					continue
				}
			}
		}
		poll.Reset(w.cfg.PollInterval)
		select {
		case <-ctx.Done():
			return
		case <-w.wake[queue]:
			// The cooldown spaces claims; a wake-up long after the last
			// claim does not wait for it again.
			if !sleepCtx(ctx, time.Until(lastClaim.Add(w.cfg.FetchCooldown))) {
				return
			}
		case <-poll.C:
		}
	}
}

func (w *Worker) claim(ctx context.Context, queue string, n int) ([]*Job, error) {
	jobs, err := w.exec.JobClaim(ctx, &JobClaimParams{
		Queue: queue, WorkerID: w.id, Max: n, LeaseDuration: w.cfg.LeaseDuration,
	})
	if err != nil || len(jobs) == 0 {
		return nil, err
	}
	if w.cfg.Hooks.Claimed != nil {
		w.cfg.Hooks.Claimed(jobs)
	}
	for _, job := range jobs {
		w.start(job)
	}
	return jobs, nil
}

// wakeQueue nudges a queue's producer without blocking.
func (w *Worker) wakeQueue(queue string) {
	if ch, ok := w.wake[queue]; ok {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// sleepCtx sleeps for d or until ctx ends; it reports whether ctx is alive.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
