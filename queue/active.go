package queue

import (
	"context"
	"sync"
	"time"
)

// activeSet tracks the attempts this worker holds leases for, from claim
// until their outcome is stored. It is keyed by lease, not by job id: a
// worker can hold a job's next attempt while the handler of an earlier one
// (given up on as stuck, or whose lease expired and was rescued) is still
// running, and each attempt keeps its own slot and state.
type activeSet struct {
	mu      sync.Mutex
	entries map[Lease]*activeJob
	byQueue map[string]int // handlers holding a slot, per queue
	claims  map[string]int // slots reserved by claims in flight, per queue
	// handing counts the handlers that have returned and settled their
	// attempt but not yet handed its outcome on (see handlerReturned);
	// handedOn is closed when it drops to zero, nil while nobody waits.
	handing  int
	handedOn chan struct{}
	// stuckAfter is how long a cancelled handler may take to return
	// (WorkerConfig.StuckThreshold) before onStuck is called with its task;
	// without onStuck nothing is watched.
	stuckAfter time.Duration
	onStuck    func(*Task)
}

type activeJob struct {
	task      *Task
	cancel    context.CancelCauseFunc
	renewed   time.Time // when the claim or the last renewal that kept the lease was sent
	running   bool      // handler still running and holding a local slot
	abandoned bool      // handler stuck: slot given back, lease no longer renewed
	lost      bool      // the store says the lease is gone: no longer renewed
	reported  bool      // the handler was cancelled and the loss reported, once
	settled   bool      // outcome decided and handed on: nothing else may finish it
	// stuck calls onStuck at stuckAt unless the handler has returned by
	// then: armed when its context is cancelled, or at the start for a
	// handler with a timeout (see armStuckLocked).
	stuck   *time.Timer
	stuckAt time.Time
}

func newActiveSet() *activeSet {
	return &activeSet{entries: make(map[Lease]*activeJob), byQueue: make(map[string]int), claims: make(map[string]int)}
}

// reserve reserves up to share of queue's free slots (limit minus handlers
// running and slots already reserved) for a claim and returns how many.
// The claim's jobs take slots as they start; unreserve then returns the
// reservation.
func (s *activeSet) reserve(queue string, limit, share int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := min(limit-s.byQueue[queue]-s.claims[queue], share)
	if n <= 0 {
		return 0
	}
	s.claims[queue] += n
	return n
}

func (s *activeSet) unreserve(queue string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.claims[queue] -= n
}

// add tracks t, whose claim was sent at claimed: its lease runs at least
// until claimed plus the lease duration. cancel cancels its handler's
// context; timeout, when not zero, is the handler's (its context is
// cancelled then).
func (s *activeSet) add(t *Task, cancel context.CancelCauseFunc, claimed time.Time, timeout time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := &activeJob{task: t, cancel: cancel, running: true, renewed: claimed}
	s.entries[t.lease] = e
	s.byQueue[t.Job.Queue]++
	if timeout > 0 {
		s.armStuckLocked(e, time.Now().Add(timeout))
	}
}

// armStuckLocked starts e's stuck timer for a handler whose context is
// cancelled at cancelled (now, or its deadline): onStuck is called
// stuckAfter later unless the handler has returned, or sooner if an earlier
// cancellation armed it already. s.mu must be held.
//
// The worker arms it where it cancels a handler's context (the deadline,
// lose, cancelAll), not with a context.AfterFunc per attempt, which
// registered a callback in each handler's context and cost 7 % of the
// worker's CPU in the steady benchmark.
func (s *activeSet) armStuckLocked(e *activeJob, cancelled time.Time) {
	at := cancelled.Add(s.stuckAfter)
	if s.onStuck == nil || !e.running || (e.stuck != nil && !at.Before(e.stuckAt)) {
		return
	}
	if e.stuck != nil {
		e.stuck.Stop()
	}
	t := e.task
	e.stuck, e.stuckAt = time.AfterFunc(time.Until(at), func() { s.onStuck(t) }), at
}

// stopStuckLocked stops e's stuck timer. s.mu must be held.
func stopStuckLocked(e *activeJob) {
	if e.stuck != nil {
		e.stuck.Stop()
		e.stuck = nil
	}
}

// cancelAll cancels the handlers' contexts with cause (through the
// worker's cancel, which is their parent) and arms their stuck timers.
func (s *activeSet) cancelAll(cancel context.CancelCauseFunc, cause error) {
	cancel(cause)
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.entries {
		s.armStuckLocked(e, now)
	}
}

// renew records that the renewal sent at sent kept the leases held.
func (s *activeSet) renew(held []Lease, sent time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range held {
		if e, ok := s.entries[l]; ok && sent.After(e.renewed) {
			e.renewed = sent
		}
	}
}

// expiry returns when the first of leases runs out as last claimed or
// renewed, d being the lease duration (the zero time when none is held).
func (s *activeSet) expiry(leases []Lease, d time.Duration) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first time.Time
	for _, l := range leases {
		if e, ok := s.entries[l]; ok && (first.IsZero() || e.renewed.Before(first)) {
			first = e.renewed
		}
	}
	if first.IsZero() {
		return first
	}
	return first.Add(d)
}

// runOut returns the leases among leases that have run out at now as last
// claimed or renewed, d being the lease duration: each on its own, so a
// lease claimed during a heartbeat outage keeps its whole duration.
func (s *activeSet) runOut(leases []Lease, now time.Time, d time.Duration) []Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Lease
	for _, l := range leases {
		if e, ok := s.entries[l]; ok && !now.Before(e.renewed.Add(d)) {
			out = append(out, l)
		}
	}
	return out
}

// entry returns t's entry, or nil once it is removed. s.mu must be held.
func (s *activeSet) entry(t *Task) *activeJob {
	if e, ok := s.entries[t.lease]; ok && e.task == t {
		return e
	}
	return nil
}

// handlerReturned frees the attempt's local slot and claims the right to
// decide its outcome, in one step: the shutdown's settleRest, which
// releases the jobs of handlers still running, either sees the attempt
// settled or settles it first, never in between (a handler that had
// returned with its result, with the job released under it). It reports
// false when the outcome was already decided (the shutdown released the
// job of a handler that ignored cancellation) or the entry is gone: the
// caller must then store nothing and report nothing. After true the caller
// must call handOn once the outcome is with the completer. The lease stays
// held until the outcome is stored.
func (s *activeSet) handlerReturned(t *Task) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entry(t)
	if e == nil {
		return false
	}
	if e.running {
		e.running = false
		s.byQueue[t.Job.Queue]--
	}
	stopStuckLocked(e)
	if e.settled {
		return false
	}
	e.settled = true
	s.handing++
	return true
}

// handOn records that an attempt settled by handlerReturned has handed its
// outcome on.
func (s *activeSet) handOn() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handing--
	if s.handing == 0 && s.handedOn != nil {
		close(s.handedOn)
		s.handedOn = nil
	}
}

// allHandedOn returns a channel closed once every handler that has
// returned has handed its outcome on (at once if none is in between).
func (s *activeSet) allHandedOn() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handing == 0 {
		c := make(chan struct{})
		close(c)
		return c
	}
	if s.handedOn == nil {
		s.handedOn = make(chan struct{})
	}
	return s.handedOn
}

// settleRest settles every attempt whose outcome is not decided yet and
// returns their tasks.
func (s *activeSet) settleRest() []*Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Task
	for _, e := range s.entries {
		if !e.settled {
			e.settled = true
			out = append(out, e.task)
		}
	}
	return out
}

func (s *activeSet) remove(t *Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entry(t)
	if e == nil {
		return
	}
	if e.running {
		s.byQueue[t.Job.Queue]--
	}
	stopStuckLocked(e)
	delete(s.entries, t.lease)
}

// running returns the number of handlers of queue holding a slot.
func (s *activeSet) running(queue string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byQueue[queue]
}

// handlers returns the number of handlers holding a slot, all queues.
func (s *activeSet) handlers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, v := range s.byQueue {
		n += v
	}
	return n
}

// busy returns the slots of queue that are taken or reserved.
func (s *activeSet) busy(queue string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byQueue[queue] + s.claims[queue]
}

func (s *activeSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// leases returns the leases to renew: those held, neither known lost nor
// given up with a stuck handler.
func (s *activeSet) leases() []Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Lease, 0, len(s.entries))
	for l, e := range s.entries {
		if !e.abandoned && !e.lost {
			out = append(out, l)
		}
	}
	return out
}

// lose cancels the handler holding lease l with cause. gone says the
// store reported the lease gone: it is then no longer renewed. Without gone
// (heartbeats failing for too long) the lease is still renewed, so a
// handler that finishes anyway before it expires is not wasted. lose
// returns the task when the loss is news to report: nil when the attempt
// is gone, its loss was already reported, its outcome is already decided
// (the finish will tell), or it ended its lease itself by completing in the
// handler's transaction.
func (s *activeSet) lose(l Lease, cause error, gone bool) *Task {
	s.mu.Lock()
	e, ok := s.entries[l]
	if !ok {
		s.mu.Unlock()
		return nil
	}
	e.lost = e.lost || gone
	if e.reported {
		s.mu.Unlock()
		return nil
	}
	e.reported = true
	settled := e.settled
	s.mu.Unlock()
	if settled || e.task.completedInTxDone() {
		return nil
	}
	e.task.markLost()
	// Whether the report waits for the handler is settled before its
	// context is cancelled: a handler that returned at once found no
	// report held and made none, and the loss went unreported.
	held := e.task.holdLossReport()
	e.cancel(cause)
	s.mu.Lock()
	s.armStuckLocked(e, time.Now())
	s.mu.Unlock()
	if held {
		return nil // the handler tells how the attempt ended (Task.EndedBy)
	}
	return e.task
}

// leaseGone reports whether the store said t's lease is gone (or t's
// attempt is no longer tracked). A lease whose heartbeats failed until it
// ran out (lose without gone) is still renewed, and an outcome written
// with it is stored if the store still holds it.
func (s *activeSet) leaseGone(t *Task) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entry(t)
	return e == nil || e.lost
}

// leasesOf returns the leases of job id's running handlers.
func (s *activeSet) leasesOf(id int64) []Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Lease
	for l, e := range s.entries {
		if l.JobID == id && e.running {
			out = append(out, l)
		}
	}
	return out
}

// abandon stops renewing the lease of a stuck handler and frees its slot.
// It reports whether the handler was still running.
func (s *activeSet) abandon(t *Task) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entry(t)
	if e == nil || !e.running {
		return false
	}
	e.running, e.abandoned = false, true
	s.byQueue[t.Job.Queue]--
	stopStuckLocked(e)
	return true
}
