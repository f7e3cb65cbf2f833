package queue

import (
	"context"
	"sync"

	"github.com/docketq/docket/queue/driver"
)

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
					for _, l := range w.active.leasesOf(e.Job.ID) {
						w.loseLease(l, ErrLeaseLost, true)
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

// listenNotifier wakes producers on jobs inserted by other processes, when
// the driver can tell. Polling backs it up.
func (w *Worker) listenNotifier(ctx context.Context, wg *sync.WaitGroup) {
	n := w.client.driver.Notifier()
	if n == nil {
		return
	}
	wg.Go(func() {
		err := n.Listen(ctx, []string{driver.TopicInsert}, func(_, queue string) { w.wakeQueue(queue) })
		if err != nil && ctx.Err() == nil {
			w.logger.Error("notifier stopped; polling only", "error", err)
		}
	})
}
