package queue

import (
	"sync"
	"sync/atomic"
)

// EventType names what happened to a job.
type EventType string

// Event types.
const (
	EventInserted  EventType = "inserted"
	EventStarted   EventType = "started"
	EventProgress  EventType = "progress"
	EventCompleted EventType = "completed"
	EventRetrying  EventType = "retrying" // failed attempt; scheduled again
	EventFailed    EventType = "failed"
	EventCancelled EventType = "cancelled"
	EventSnoozed   EventType = "snoozed"
	EventReleased  EventType = "released" // returned to pending at shutdown
	EventRescued   EventType = "rescued"  // lease expired; back to pending or failed
	EventLeaseLost EventType = "lease_lost"
)

// Event is a change to a job. Job is a snapshot taken when the event was
// published; subscribers must not modify it.
type Event struct {
	Type EventType
	Job  *Job
}

// Bus fans events out to subscribers in process. Publishing never blocks: a
// subscriber whose buffer is full misses the event (counted in Dropped) and
// should re-read the store. The zero value is not usable; call NewBus.
type Bus struct {
	mu      sync.RWMutex
	subs    map[*subscription]struct{}
	dropped atomic.Int64
	n       atomic.Int32 // len(subs), read without the lock by Listening
}

type subscription struct {
	ch     chan Event
	filter func(Event) bool
}

// NewBus returns an empty bus.
func NewBus() *Bus {
	return &Bus{subs: make(map[*subscription]struct{})}
}

// Subscribe returns a channel of events that pass filter (all when nil),
// buffered to size, and a function that ends the subscription and closes
// the channel.
func (b *Bus) Subscribe(size int, filter func(Event) bool) (<-chan Event, func()) {
	s := &subscription{ch: make(chan Event, size), filter: filter}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.n.Store(int32(len(b.subs)))
	b.mu.Unlock()
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs, s)
			b.n.Store(int32(len(b.subs)))
			b.mu.Unlock()
			close(s.ch)
		})
	}
}

// Publish delivers e to every subscriber whose filter accepts it.
func (b *Bus) Publish(e Event) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for s := range b.subs {
		if s.filter != nil && !s.filter(e) {
			continue
		}
		select {
		case s.ch <- e:
		default:
			b.dropped.Add(1)
		}
	}
}

// Listening reports whether anyone is subscribed: a publisher may skip
// building an event nobody would receive (a worker's per-job snapshots).
func (b *Bus) Listening() bool { return b.n.Load() > 0 }

// Dropped returns how many events subscribers have missed.
func (b *Bus) Dropped() int64 { return b.dropped.Load() }
