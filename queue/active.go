package queue

import (
	"context"
	"sync"
)

// activeSet tracks the jobs this worker holds leases for, from claim until
// their finish is stored.
type activeSet struct {
	mu      sync.Mutex
	entries map[int64]*activeJob
	byQueue map[string]int // handlers running, per queue
}

type activeJob struct {
	task      *Task
	cancel    context.CancelCauseFunc
	running   bool // handler still running (holds a local slot)
	abandoned bool // handler stuck; lease no longer renewed
}

func newActiveSet() *activeSet {
	return &activeSet{entries: make(map[int64]*activeJob), byQueue: make(map[string]int)}
}

func (s *activeSet) add(t *Task, cancel context.CancelCauseFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries[t.lease.JobID] = &activeJob{task: t, cancel: cancel, running: true}
	s.byQueue[t.Job.Queue]++
}

// handlerDone frees the job's local slot; its lease stays held until the
// finish is stored.
func (s *activeSet) handlerDone(t *Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entries[t.lease.JobID]; ok && e.running {
		e.running = false
		s.byQueue[t.Job.Queue]--
	}
}

func (s *activeSet) remove(t *Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[t.lease.JobID]
	if !ok || e.task != t {
		return
	}
	if e.running {
		s.byQueue[t.Job.Queue]--
	}
	delete(s.entries, t.lease.JobID)
}

func (s *activeSet) running(queue string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byQueue[queue]
}

func (s *activeSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

func (s *activeSet) all() []*activeJob {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*activeJob, 0, len(s.entries))
	for _, e := range s.entries {
		out = append(out, e)
	}
	return out
}

// leases returns the leases held, for a heartbeat.
func (s *activeSet) leases() []Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Lease, 0, len(s.entries))
	for _, e := range s.entries {
		if !e.abandoned {
			out = append(out, e.task.lease)
		}
	}
	return out
}

// lose cancels the job holding lease, if it is still that attempt.
func (s *activeSet) lose(l Lease, cause error) *Task {
	s.mu.Lock()
	e, ok := s.entries[l.JobID]
	s.mu.Unlock()
	if !ok || e.task.lease != l {
		return nil
	}
	e.task.markLost()
	e.cancel(cause)
	return e.task
}

// loseID cancels the handler of a job cancelled by a client, if this worker
// runs it.
func (s *activeSet) loseID(id int64) {
	s.mu.Lock()
	e, ok := s.entries[id]
	s.mu.Unlock()
	if ok && e.running {
		e.task.markLost()
		e.cancel(ErrLeaseLost)
	}
}

// abandon stops renewing the lease of a stuck handler and frees its slot.
// It reports whether the handler was still running.
func (s *activeSet) abandon(t *Task) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[t.lease.JobID]
	if !ok || e.task != t || !e.running {
		return false
	}
	e.running, e.abandoned = false, true
	s.byQueue[t.Job.Queue]--
	return true
}
