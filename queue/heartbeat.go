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
// when renewals keep failing, each once its lease as last claimed or
// renewed has run out (see leaseRunOut). After a failed renewal it tries
// again when the next lease runs out, if that comes before the next tick,
// so that a handler is cancelled at its lease's end, not up to an interval
// after it, when the store may already have handed the job to another
// worker (TestWorker_HeartbeatHostClockJumps). While a renewal is in
// flight, watchRunOut cancels each lease that runs out meanwhile, so one
// that hangs until its timeout (at least an interval) does not keep a
// handler running past its lease either
// (TestWorker_HeartbeatHangCancelsAtRunOut).
func (w *Worker) heartbeat(ctx context.Context) {
	tick := time.NewTicker(w.cfg.HeartbeatInterval)
	defer tick.Stop()
	runOut := time.NewTimer(w.cfg.HeartbeatInterval) // armed after a failed renewal
	runOut.Stop()
	defer runOut.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-runOut.C:
		}
		runOut.Stop()
		leases := w.active.leases()
		sent := time.Now()
		if len(leases) == 0 {
			continue
		}
		// Each lease runs at least until the claim or the last renewal
		// that kept it was sent, plus LeaseDuration; the first of them
		// bounds this renewal.
		expiry := w.active.expiry(leases, w.cfg.LeaseDuration)
		hctx, cancel := context.WithTimeout(ctx, min(w.cfg.LeaseDuration/2, max(time.Until(expiry), w.cfg.HeartbeatInterval)))
		stop := w.watchRunOut(leases)
		held, err := w.exec.JobHeartbeat(hctx, &driver.JobHeartbeatParams{Leases: leases, LeaseDuration: w.cfg.LeaseDuration})
		stop()
		cancel()
		if err != nil {
			w.logger.Warn("heartbeat failed", "jobs", len(leases), "error", err, "leases_run_out_in", time.Until(expiry).Round(time.Millisecond))
			out := w.leaseRunOut(leases)
			for _, l := range out {
				w.loseLease(l, errHeartbeatDeadline, false)
			}
			if next := w.nextRunOut(leases, out); !next.IsZero() && time.Until(next) < w.cfg.HeartbeatInterval {
				runOut.Reset(time.Until(next))
			}
			continue
		}
		w.active.renew(held, sent)
		w.dropLost(leases, held)
		if w.cfg.Hooks.Heartbeat != nil {
			w.cfg.Hooks.Heartbeat(len(held))
		}
	}
}

// leaseRunOut returns the leases whose handlers must stop because
// heartbeats failed until they ran out: each lease as it was last claimed
// or renewed, so one claimed during an outage keeps its whole duration
// (before, every lease was taken to end with the last renewal before the
// outage, and a job claimed meanwhile was cancelled at the next failed
// heartbeat, with nearly a lease left, to run again elsewhere). Until then
// the work is still this worker's, whatever a slow heartbeat says: one
// heartbeat that timed out under load used to cancel every handler. On a
// store only this process uses (Capabilities.MultiProcess false) none
// ever is: no other process can take the jobs over, and a heartbeat
// stalled behind a handler's own long transaction (SQLite's one writer)
// says nothing about the lease; the next renewal that gets through tells
// which leases are still held.
func (w *Worker) leaseRunOut(leases []Lease) []Lease {
	if !w.client.driver.Capabilities().MultiProcess {
		return nil
	}
	return w.active.runOut(leases, time.Now(), w.cfg.LeaseDuration)
}

// nextRunOut is when the first of leases, out excepted (those run out
// already), runs out as last claimed or renewed; the zero time when none
// does (or none ever runs out: see leaseRunOut).
func (w *Worker) nextRunOut(leases, out []Lease) time.Time {
	if !w.client.driver.Capabilities().MultiProcess {
		return time.Time{}
	}
	gone := make(map[Lease]bool, len(out))
	for _, l := range out {
		gone[l] = true
	}
	left := make([]Lease, 0, len(leases))
	for _, l := range leases {
		if !gone[l] {
			left = append(left, l)
		}
	}
	return w.active.expiry(left, w.cfg.LeaseDuration)
}

// watchRunOut cancels, while a renewal of leases is in flight, each of
// them that runs out as last claimed or renewed (see leaseRunOut), when it
// does, and returns the function that stops the watch and waits for it:
// called when the renewal returns, before its result is handled. A lease
// it cancels stays among those renewed, as after a failed renewal, and its
// loss is reported once (activeSet.lose), whatever the renewal returns.
// The run-out is measured from when the claim or renewal was sent, before
// the store set its expiry to its own time plus LeaseDuration, so the
// handler is cancelled no later than the store's expiry, however long the
// renewal hangs, even past its own timeout (a driver slow to honour its
// context).
func (w *Worker) watchRunOut(leases []Lease) (stop func()) {
	next := w.nextRunOut(leases, nil)
	if next.IsZero() {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTimer(time.Until(next))
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			out := w.leaseRunOut(leases)
			for _, l := range out {
				w.loseLease(l, errHeartbeatDeadline, false)
			}
			next := w.nextRunOut(leases, out)
			if next.IsZero() {
				return
			}
			t.Reset(time.Until(next))
		}
	}()
	return func() {
		close(quit)
		<-done
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
// the lease gone (see activeSet.lose). The handler's context is cancelled
// with a cause that is ErrLeaseLost, joined with cause when cause is
// another error (a stoppedError for a client's cancel or discard).
func (w *Worker) loseLease(l Lease, cause error, gone bool) {
	if cause != ErrLeaseLost { //nolint:errorlint // sentinel identity
		cause = errors.Join(ErrLeaseLost, cause)
	}
	if t := w.active.lose(l, cause, gone); t != nil {
		if s := stoppedBy(cause); s != nil {
			w.logger.Info(s.Error()+"; cancelling handler", "job_id", l.JobID, "attempt", l.Attempt)
		} else {
			w.logger.Warn("lease lost; cancelling handler", "job_id", l.JobID, "attempt", l.Attempt, "cause", cause)
		}
		if w.cfg.Hooks.LeaseLost != nil {
			w.cfg.Hooks.LeaseLost(l)
		}
	}
}
