package queue

import (
	"slices"
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
	EventWaiting   EventType = "waiting"  // a workflow parent awaits its children (AwaitChildren)
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
	// Read without the lock by Listening and ListeningTo: the number of
	// subscriptions, of those to every type, and of those to each type
	// (a map replaced, never changed, when a subscription comes or goes).
	n, all atomic.Int32
	typed  atomic.Pointer[map[EventType]int32]
}

type subscription struct {
	ch     chan Event
	filter func(Event) bool
	types  []EventType // nil: every type
}

// NewBus returns an empty bus.
func NewBus() *Bus {
	return &Bus{subs: make(map[*subscription]struct{})}
}

// Subscribe returns a channel of the events of types (every type when none
// is given) that pass filter (all when nil), buffered to size, and a
// function that ends the subscription and closes the channel. Naming the
// types lets publishers skip building events nobody receives: a worker
// copies each job it starts, and each progress write, only while someone
// is subscribed to those types.
func (b *Bus) Subscribe(size int, filter func(Event) bool, types ...EventType) (<-chan Event, func()) {
	s := &subscription{ch: make(chan Event, size), filter: filter}
	if len(types) > 0 {
		s.types = slices.Clone(types)
	}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.count()
	b.mu.Unlock()
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs, s)
			b.count()
			b.mu.Unlock()
			close(s.ch)
		})
	}
}

// count recomputes the counters Listening and ListeningTo read. b.mu must
// be held.
func (b *Bus) count() {
	all, typed := 0, make(map[EventType]int32)
	for s := range b.subs {
		if s.types == nil {
			all++
		}
		for _, t := range s.types {
			typed[t]++
		}
	}
	b.n.Store(int32(len(b.subs)))
	b.all.Store(int32(all))
	b.typed.Store(&typed)
}

// Publish delivers e to every subscriber to its type whose filter accepts
// it.
func (b *Bus) Publish(e Event) {
	if !b.ListeningTo(e.Type) {
		return
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	for s := range b.subs {
		if s.types != nil && !slices.Contains(s.types, e.Type) {
			continue
		}
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

// Listening reports whether anyone is subscribed.
func (b *Bus) Listening() bool { return b.n.Load() > 0 }

// ListeningTo reports whether anyone is subscribed to events of type t: a
// publisher may skip building an event nobody would receive.
func (b *Bus) ListeningTo(t EventType) bool {
	if b.all.Load() > 0 {
		return true
	}
	typed := b.typed.Load()
	return typed != nil && (*typed)[t] > 0
}

// Dropped returns how many events subscribers have missed.
func (b *Bus) Dropped() int64 { return b.dropped.Load() }
