package queue

import (
	"context"
	"errors"
	"time"
)

// errHeartbeatDeadline is the cancellation cause of handlers whose worker
// could not renew leases for half a lease: the store is unreachable, and
// another worker will soon take the jobs over.
var errHeartbeatDeadline = errors.New("lease lost: heartbeats failing for half the lease")

// heartbeat renews the leases of every job this worker holds, cancels the
// handlers whose lease is lost, and cancels all of them when renewals keep
// failing for half a lease.
func (w *Worker) heartbeat(ctx context.Context) {
	tick := time.NewTicker(w.cfg.HeartbeatInterval)
	defer tick.Stop()
	lastOK := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		leases := w.active.leases()
		if len(leases) == 0 {
			lastOK = time.Now()
			continue
		}
		hctx, cancel := context.WithTimeout(ctx, w.cfg.LeaseDuration/2)
		held, err := w.exec.JobHeartbeat(hctx, &JobHeartbeatParams{Leases: leases, LeaseDuration: w.cfg.LeaseDuration})
		cancel()
		if err != nil {
			w.logger.Warn("heartbeat failed", "jobs", len(leases), "error", err)
			if time.Since(lastOK) > w.cfg.LeaseDuration/2 {
				for _, l := range leases {
					w.loseLease(l, errHeartbeatDeadline, false)
				}
			}
			continue
		}
		lastOK = time.Now()
		w.dropLost(leases, held)
		if w.cfg.Hooks.Heartbeat != nil {
			w.cfg.Hooks.Heartbeat(len(held))
		}
	}
}

// dropLost cancels the jobs whose lease was not renewed.
func (w *Worker) dropLost(sent, held []Lease) {
	kept := make(map[Lease]struct{}, len(held))
	for _, l := range held {
		kept[l] = struct{}{}
	}
	for _, l := range sent {
		if _, ok := kept[l]; !ok {
			w.loseLease(l, ErrLeaseLost, true)
		}
	}
}

// loseLease cancels the handler of lease l; gone says the store reported
// the lease gone (see activeSet.lose).
func (w *Worker) loseLease(l Lease, cause error, gone bool) {
	if cause != ErrLeaseLost { //nolint:errorlint // sentinel identity
		cause = errors.Join(ErrLeaseLost, cause)
	}
	if t := w.active.lose(l, cause, gone); t != nil {
		w.logger.Warn("lease lost; cancelling handler", "job_id", l.JobID, "attempt", l.Attempt, "cause", cause)
		if w.cfg.Hooks.LeaseLost != nil {
			w.cfg.Hooks.LeaseLost(l)
		}
	}
}
