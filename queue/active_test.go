package queue

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

func testTask(attempt int) *Task {
	job := &Job{ID: 7, Queue: DefaultQueue, Attempt: attempt, LeaseToken: int64(100 + attempt)}
	return &Task{Job: job, lease: job.Lease()}
}

func nop(error) {}

// Two attempts of one job held at once keep a slot each: the handler of
// the earlier attempt returning frees its own slot, not the later one's.
func TestActiveSet_PerAttempt(t *testing.T) {
	t.Run("EarlierAbandoned", func(t *testing.T) {
		s := newActiveSet()
		t1, t2 := testTask(1), testTask(2)
		s.add(t1, nop, time.Now())
		if !s.abandon(t1) {
			t.Fatal("abandon of a running handler reported false")
		}
		s.add(t2, nop, time.Now())
		s.handlerDone(t1) // the stuck handler returns at last
		if n := s.running(DefaultQueue); n != 1 {
			t.Fatalf("running = %d after the abandoned attempt returned, want 1 (attempt 2)", n)
		}
		s.handlerDone(t2)
		if n := s.running(DefaultQueue); n != 0 {
			t.Fatalf("running = %d after both returned, want 0", n)
		}
	})
	t.Run("BothRunning", func(t *testing.T) {
		s := newActiveSet()
		t1, t2 := testTask(1), testTask(2)
		s.add(t1, nop, time.Now())
		s.add(t2, nop, time.Now())
		s.handlerDone(t1)
		s.remove(t1)
		if n := s.running(DefaultQueue); n != 1 {
			t.Fatalf("running = %d, want 1", n)
		}
		s.handlerDone(t2)
		s.remove(t2)
		if n, l := s.running(DefaultQueue), s.len(); n != 0 || l != 0 {
			t.Fatalf("running = %d, entries = %d after both ended, want 0, 0", n, l)
		}
	})
	t.Run("SettleOnce", func(t *testing.T) {
		s := newActiveSet()
		t1 := testTask(1)
		s.add(t1, nop, time.Now())
		if !s.settle(t1) {
			t.Fatal("first settle refused")
		}
		if rest := s.settleRest(); len(rest) != 0 {
			t.Fatalf("settleRest returned %d settled attempts", len(rest))
		}
		if s.settle(t1) {
			t.Fatal("second settle accepted")
		}
	})
	t.Run("LoseOnce", func(t *testing.T) {
		s := newActiveSet()
		t1 := testTask(1)
		var cancels atomic.Int32
		s.add(t1, func(error) { cancels.Add(1) }, time.Now())
		if s.lose(t1.lease, ErrLeaseLost, true) == nil {
			t.Fatal("first loss not reported")
		}
		if s.lose(t1.lease, ErrLeaseLost, true) != nil {
			t.Fatal("second loss of the same lease reported again")
		}
		if l := s.leases(); len(l) != 0 {
			t.Fatalf("a lost lease is still renewed: %v", l)
		}
		if n := cancels.Load(); n != 1 {
			t.Fatalf("handler cancelled %d times", n)
		}
	})
}

// The stuck timer never fires once the handler has returned, even when its
// context was cancelled before.
func TestStuckWatch_Stop(t *testing.T) {
	var fired atomic.Bool
	ctx, cancel := context.WithCancel(context.Background())
	w := watchStuck(ctx, 50*time.Millisecond, func() { fired.Store(true) })
	cancel()
	time.Sleep(10 * time.Millisecond) // the timer is started
	w.stop()
	time.Sleep(150 * time.Millisecond)
	if fired.Load() {
		t.Fatal("stuck timer fired after the handler returned")
	}

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	w = watchStuck(ctx, 10*time.Millisecond, func() { fired.Store(true) })
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for !fired.Load() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	w.stop()
	if !fired.Load() {
		t.Fatal("stuck timer never fired for a handler that did not return")
	}
}
