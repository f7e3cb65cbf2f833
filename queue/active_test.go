package queue

import (
	"sync/atomic"
	"testing"
	"time"
)

func testTask(attempt int) *Task {
	job := &Job{ID: 7, Queue: DefaultQueue, Attempt: attempt, LeaseToken: int64(100 + attempt)}
	return &Task{Job: job, lease: job.Lease()}
}

func nop(error) {}

// twoAttempts is a set holding attempts 1 and 2 of one job, both running.
func twoAttempts() (*activeSet, *Task, *Task) {
	s := newActiveSet()
	t1, t2 := testTask(1), testTask(2)
	s.add(t1, nop, time.Now(), 0)
	s.add(t2, nop, time.Now(), 0)
	return s, t1, t2
}

// handlerEnds is what a handler's goroutine does with its attempt when the
// handler returns and its outcome has been handed on.
func handlerEnds(s *activeSet, t *Task) {
	if s.handlerReturned(t) {
		s.handOn()
	}
}

// Two attempts of one job held at once keep a slot each: the handler of
// the earlier attempt returning frees its own slot, not the later one's.
func TestActiveSet_PerAttempt(t *testing.T) {
	t.Parallel()
	t.Run("EarlierAbandoned", func(t *testing.T) {
		s := newActiveSet()
		t1, t2 := testTask(1), testTask(2)
		s.add(t1, nop, time.Now(), 0)
		if !s.abandon(t1) {
			t.Fatal("abandon of a running handler reported false")
		}
		s.add(t2, nop, time.Now(), 0)
		handlerEnds(s, t1) // the stuck handler returns at last
		if n := s.running(DefaultQueue); n != 1 {
			t.Fatalf("running = %d after the abandoned attempt returned, want 1 (attempt 2)", n)
		}
		handlerEnds(s, t2)
		if n := s.running(DefaultQueue); n != 0 {
			t.Fatalf("running = %d after both returned, want 0", n)
		}
	})
	t.Run("BothRunning", func(t *testing.T) {
		s, t1, t2 := twoAttempts()
		handlerEnds(s, t1)
		s.remove(t1)
		if n := s.running(DefaultQueue); n != 1 {
			t.Fatalf("running = %d, want 1", n)
		}
		handlerEnds(s, t2)
		s.remove(t2)
		if n, l := s.running(DefaultQueue), s.len(); n != 0 || l != 0 {
			t.Fatalf("running = %d, entries = %d after both ended, want 0, 0", n, l)
		}
	})
	t.Run("SettleOnce", func(t *testing.T) {
		s := newActiveSet()
		t1 := testTask(1)
		s.add(t1, nop, time.Now(), 0)
		if !s.handlerReturned(t1) {
			t.Fatal("the handler's return did not settle its attempt")
		}
		if rest := s.settleRest(); len(rest) != 0 {
			t.Fatalf("settleRest returned %d settled attempts", len(rest))
		}
		if s.handlerReturned(t1) {
			t.Fatal("second settle accepted")
		}
	})
	t.Run("ReleasedFirst", func(t *testing.T) {
		s := newActiveSet()
		t1 := testTask(1)
		s.add(t1, nop, time.Now(), 0)
		if rest := s.settleRest(); len(rest) != 1 {
			t.Fatalf("settleRest returned %d attempts, want the running one", len(rest))
		}
		if s.handlerReturned(t1) {
			t.Fatal("a handler returning after the release settled its attempt again")
		}
		if n := s.running(DefaultQueue); n != 0 {
			t.Fatalf("running = %d after the handler returned, want 0", n)
		}
	})
	t.Run("HandOffs", func(t *testing.T) {
		s, t1, t2 := twoAttempts()
		closed := func(c <-chan struct{}) bool {
			select {
			case <-c:
				return true
			default:
				return false
			}
		}
		if !closed(s.allHandedOn()) {
			t.Fatal("allHandedOn open with no handler returned")
		}
		s.handlerReturned(t1)
		s.handlerReturned(t2)
		c := s.allHandedOn()
		s.handOn()
		if closed(c) {
			t.Fatal("allHandedOn closed with one outcome still to hand on")
		}
		s.handOn()
		if !closed(c) {
			t.Fatal("allHandedOn open after both outcomes were handed on")
		}
	})
	t.Run("LoseOnce", func(t *testing.T) {
		s := newActiveSet()
		t1 := testTask(1)
		var cancels atomic.Int32
		s.add(t1, func(error) { cancels.Add(1) }, time.Now(), 0)
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

// A handler is reported stuck when it has not returned stuckAfter after
// its context was cancelled (lost lease, shutdown, or its timeout), and
// never once it has returned.
func TestActiveSet_Stuck(t *testing.T) {
	t.Parallel()
	newSet := func() (*activeSet, *atomic.Int32) {
		s := newActiveSet()
		var fired atomic.Int32
		s.stuckAfter, s.onStuck = 20*time.Millisecond, func(task *Task) {
			if s.abandon(task) {
				fired.Add(1)
			}
		}
		return s, &fired
	}
	eventually := func(t *testing.T, fired *atomic.Int32, what string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for fired.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if fired.Load() != 1 {
			t.Fatalf("%s: stuck reported %d times, want once", what, fired.Load())
		}
	}
	t.Run("Lost", func(t *testing.T) {
		s, fired := newSet()
		t1 := testTask(1)
		s.add(t1, nop, time.Now(), 0)
		time.Sleep(50 * time.Millisecond)
		if fired.Load() != 0 {
			t.Fatal("stuck reported for a handler whose context was never cancelled")
		}
		s.lose(t1.lease, ErrLeaseLost, true)
		eventually(t, fired, "lost lease")
		if n := s.running(DefaultQueue); n != 0 {
			t.Fatalf("running = %d after the stuck handler was given up on, want 0", n)
		}
	})
	t.Run("Shutdown", func(t *testing.T) {
		s, fired := newSet()
		s.add(testTask(1), nop, time.Now(), 0)
		s.cancelAll(func(error) {}, errShutdown)
		eventually(t, fired, "shutdown")
	})
	t.Run("Timeout", func(t *testing.T) {
		s, fired := newSet()
		s.add(testTask(1), nop, time.Now(), 30*time.Millisecond)
		eventually(t, fired, "timeout")
	})
	t.Run("ReturnedInTime", func(t *testing.T) {
		s, fired := newSet()
		t1, t2 := testTask(1), testTask(2)
		s.add(t1, nop, time.Now(), 0)
		s.add(t2, nop, time.Now(), 30*time.Millisecond)
		s.lose(t1.lease, ErrLeaseLost, true)
		s.handlerReturned(t1)
		s.handlerReturned(t2)
		time.Sleep(150 * time.Millisecond)
		if fired.Load() != 0 {
			t.Fatal("stuck reported for a handler that returned in time")
		}
	})
}
