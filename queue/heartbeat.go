package queue

import (
	"context"
	"errors"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// errHeartbeatDeadline is the cancellation cause of handlers whose leases
// ran out while heartbeats kept failing: another worker may take the jobs
// over now.
var errHeartbeatDeadline = errors.New("lease lost: heartbeats failed until the lease ran out")

// heartbeat renews the leases of every job this worker holds and cancels
// the handlers whose lease is lost: those the store no longer holds, and,
// when renewals keep failing, all of them once the leases as last renewed
// have run out (see leaseRunOut).
func (w *Worker) heartbeat(ctx context.Context) {
	tick := time.NewTicker(w.cfg.HeartbeatInterval)
	defer tick.Stop()
	// renewed is when the last renewal that succeeded was sent: every
	// lease held then runs at least until renewed + LeaseDuration, and
	// one claimed since, later.
	renewed := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		leases := w.active.leases()
		sent := time.Now()
		if len(leases) == 0 {
			renewed = sent
			continue
		}
		expiry := renewed.Add(w.cfg.LeaseDuration)
		hctx, cancel := context.WithTimeout(ctx, min(w.cfg.LeaseDuration/2, max(time.Until(expiry), w.cfg.HeartbeatInterval)))
		held, err := w.exec.JobHeartbeat(hctx, &driver.JobHeartbeatParams{Leases: leases, LeaseDuration: w.cfg.LeaseDuration})
		cancel()
		if err != nil {
			w.logger.Warn("heartbeat failed", "jobs", len(leases), "error", err, "leases_run_out_in", time.Until(expiry).Round(time.Millisecond))
			if w.leaseRunOut(expiry) {
				for _, l := range leases {
					w.loseLease(l, errHeartbeatDeadline, false)
				}
			}
			continue
		}
		renewed = sent
		w.dropLost(leases, held)
		if w.cfg.Hooks.Heartbeat != nil {
			w.cfg.Hooks.Heartbeat(len(held))
		}
	}
}

// leaseRunOut reports whether handlers must stop because heartbeats failed
// until expiry, when the leases as last renewed end. Until then the work is
// still this worker's, whatever a slow heartbeat says: one heartbeat that
// timed out under load used to cancel every handler. On a store only this
// process uses (Capabilities.MultiProcess false) it never is: no other
// process can take the jobs over, and a heartbeat stalled behind a
// handler's own long transaction (SQLite's one writer) says nothing about
// the lease; the next renewal that gets through tells which leases are
// still held.
func (w *Worker) leaseRunOut(expiry time.Time) bool {
	return w.client.driver.Capabilities().MultiProcess && !time.Now().Before(expiry)
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
