package queue

import (
	"context"
	"errors"
	"strconv"
	"sync"

	"github.com/docketq/docket/queue/driver"
)

// stoppedError is the cancellation cause, beside ErrLeaseLost, of a
// handler whose job a client ended on purpose (cancelled or discarded): the
// worker logs it at INFO as what it is, where a lease lost for any other
// reason (rescued, taken over, not renewed) is a WARN.
type stoppedError struct{ how string }

func (e *stoppedError) Error() string { return "job " + e.how }

var (
	errJobCancelled = &stoppedError{how: "cancelled"}
	errJobDiscarded = &stoppedError{how: "discarded"}
	// errJobStopped is another process's cancel or discard: the
	// notification names the job, not which of the two.
	errJobStopped = &stoppedError{how: "cancelled or discarded"}
)

// stoppedBy returns the stoppedError in cause's chain, or nil.
func stoppedBy(cause error) *stoppedError {
	s, _ := errors.AsType[*stoppedError](cause)
	return s
}

// listenInProcess wakes producers on jobs inserted, and on queues and
// tenants resumed, in this process and stops handlers of jobs cancelled in
// this process. It returns a function that stops listening.
func (w *Worker) listenInProcess() func() {
	ch, unsubscribe := w.client.bus.Subscribe(256, nil, EventInserted, EventReleased, EventCancelled, EventFailed)
	var wg sync.WaitGroup
	wg.Go(func() {
		for e := range ch {
			switch e.Type {
			case EventCancelled, EventFailed:
				// Cancelled or discarded by a client of this process: stop
				// the handler now rather than at the next heartbeat, and
				// report the loss as a heartbeat would.
				if e.Job.State.Finished() {
					why := errJobCancelled
					if e.Type == EventFailed {
						why = errJobDiscarded
					}
					for _, l := range w.active.leasesOf(e.Job.ID) {
						w.loseLease(l, why, true)
					}
				}
			default:
				w.wakeQueue(e.Job.Queue)
			}
		}
	})
	stopWake := w.client.wake.add(w.wakeClaimers)
	return func() { stopWake(); unsubscribe(); wg.Wait() }
}

// listenNotifier wakes producers on jobs inserted by other processes, and
// stops handlers of jobs cancelled by other processes, when the driver can
// tell. Polling and the heartbeat back it up.
func (w *Worker) listenNotifier(ctx context.Context, wg *sync.WaitGroup) {
	n := w.client.driver.Notifier()
	if n == nil {
		return
	}
	wg.Go(func() {
		err := n.Listen(ctx, []string{driver.TopicInsert, driver.TopicCancel}, func(topic, payload string) {
			if topic != driver.TopicCancel {
				w.wakeQueue(payload)
				return
			}
			if id, err := strconv.ParseInt(payload, 10, 64); err == nil {
				for _, l := range w.active.leasesOf(id) {
					w.loseLease(l, errJobStopped, true)
				}
			}
		})
		if err != nil && ctx.Err() == nil {
			w.logger.Error("notifier stopped; polling only", "error", err)
		}
	})
}
