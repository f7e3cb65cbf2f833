package httpapi

import (
	"strconv"
	"testing"
	"time"
)

// The failure table is bounded, but a lock in it survives however many
// other names fail: a flood of failures cannot lift a lock.
func TestFailures_LockSurvivesFullTable(t *testing.T) {
	t.Parallel()
	now := time.Now()
	f := newFailures(time.Minute)
	for range 3 {
		f.add("a:victim", 3, now)
	}
	for i := range maxTracked + 10 {
		f.add("a:flood"+strconv.Itoa(i), 3, now.Add(time.Second))
	}
	if f.blocked("a:victim", 3, now.Add(2*time.Second)) <= 0 {
		t.Error("the lock was lifted by a full table")
	}
	if len(f.counts) > maxTracked {
		t.Errorf("%d names tracked, want at most %d", len(f.counts), maxTracked)
	}
}

// A full table makes room by dropping expired names, then the oldest that
// are not locked; when every name is locked a new one is not tracked,
// until a lock expires.
func TestFailures_Eviction(t *testing.T) {
	t.Parallel()
	now := time.Now()
	f := newFailures(time.Minute)
	f.capacity = 3
	f.add("locked1", 1, now)
	f.add("open", 5, now.Add(time.Second))
	f.add("locked2", 1, now.Add(2*time.Second))
	f.add("new", 1, now.Add(3*time.Second)) // drops "open", the only name not locked
	if _, ok := f.counts["open"]; ok {
		t.Error(`"open" kept in a full table`)
	}
	f.add("refused", 1, now.Add(4*time.Second)) // every name locked: not tracked
	if f.blocked("refused", 1, now.Add(4*time.Second)) != 0 {
		t.Error("a name tracked in a table full of locks")
	}
	for _, name := range []string{"locked1", "locked2", "new"} {
		if f.blocked(name, 1, now.Add(5*time.Second)) <= 0 {
			t.Errorf("%s: lock lost", name)
		}
	}
	later := now.Add(time.Minute) // "locked1" expired: room again
	f.add("after", 1, later)
	if f.blocked("after", 1, later) <= 0 || f.blocked("locked2", 1, later) <= 0 {
		t.Error("after an expiry: the new name or a live lock is missing")
	}
}
