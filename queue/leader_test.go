package queue

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// fakeService counts the services running and reports each start.
type fakeService struct {
	running *atomic.Int32
	started chan<- struct{}
}

func (s fakeService) run(ctx context.Context) {
	s.running.Add(1)
	defer s.running.Add(-1)
	s.started <- struct{}{}
	<-ctx.Done()
}

// TestLeadership_StartsAndStopsServices: the services start when
// leadership is gained, are cancelled and joined before the next attempt
// once it is lost, start afresh when it is gained again, and stop before
// the resignation when ctx ends; no goroutine outlives run.
func TestLeadership_StartsAndStopsServices(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const nServices = 4
	var running atomic.Int32
	started := make(chan struct{})
	answers := make(chan bool)      // what each attempt returns
	attempts := make(chan bool)     // what each attempt was told (leading)
	tick := make(chan time.Time)    // the election ticker
	resigned := make(chan int32, 1) // services running at resignation
	terms := 0
	l := &leadership{
		attempt: func(ctx context.Context, leading bool) bool {
			attempts <- leading
			return <-answers
		},
		resign:    func(context.Context) { resigned <- running.Load() },
		tick:      tick,
		afterFunc: neverLapse,
		services: func() []service {
			terms++
			svcs := make([]service, nServices)
			for i := range svcs {
				svcs[i] = fakeService{running: &running, started: started}
			}
			return svcs
		},
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); l.run(ctx) }()

	waitStarted := func() {
		t.Helper()
		for range nServices {
			<-started
		}
	}
	expectAttempt := func(wantLeading, answer bool) {
		t.Helper()
		if got := <-attempts; got != wantLeading {
			t.Fatalf("attempt told leading=%v, want %v", got, wantLeading)
		}
		answers <- answer
	}

	expectAttempt(false, true) // gains leadership
	waitStarted()
	tick <- time.Time{}
	expectAttempt(true, false) // loses it
	tick <- time.Time{}
	// The loop stops the services before it waits for the tick, so by the
	// next attempt every one has returned.
	if got := <-attempts; got || running.Load() != 0 {
		t.Fatalf("after losing leadership: attempt told leading=%v, %d services running; want false, 0", got, running.Load())
	}
	answers <- true // gains it again: a fresh set
	waitStarted()
	if terms != 2 || running.Load() != nServices {
		t.Fatalf("%d terms, %d services running; want 2, %d", terms, running.Load(), nServices)
	}
	tick <- time.Time{}
	expectAttempt(true, true) // renews: the services keep running
	cancel()
	if n := <-resigned; n != 0 {
		t.Errorf("%d services still running at the resignation, want 0", n)
	}
	<-done
	if terms != 2 {
		t.Errorf("%d terms, want 2 (a renewal starts nothing)", terms)
	}
}

// TestLeadership_NeverLeading: a process that never leads starts no
// service and does not resign.
func TestLeadership_NeverLeading(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tick := make(chan time.Time)
	calls := make(chan bool)
	l := &leadership{
		attempt:   func(_ context.Context, leading bool) bool { calls <- leading; return false },
		resign:    func(context.Context) { t.Error("resigned without leading") },
		tick:      tick,
		afterFunc: neverLapse,
		services: func() []service {
			t.Error("services started without leading")
			return nil
		},
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); l.run(ctx) }()
	<-calls
	tick <- time.Time{}
	<-calls
	cancel()
	<-done
}

// neverLapse is a leadership.afterFunc whose lapses never fire.
func neverLapse(time.Duration, func()) func() bool { return func() bool { return true } }

// lapses is a leadership.afterFunc whose lapses the test fires: each
// armed lapse is sent on armed.
type lapses struct{ armed chan *lapse }

type lapse struct {
	mu      sync.Mutex
	f       func()
	pending bool
}

func (ls *lapses) afterFunc(_ time.Duration, f func()) func() bool {
	l := &lapse{f: f, pending: true}
	ls.armed <- l
	return func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		was := l.pending
		l.pending = false
		return was
	}
}

// fire runs the lapse as the timer would, unless it was stopped.
func (l *lapse) fire() {
	l.mu.Lock()
	run := l.pending
	l.pending = false
	l.mu.Unlock()
	if run {
		l.f()
	}
}

// TestLeadership_ServicesLapseBeforeTheLease: a leader whose renewal is
// still on its way when its hold runs out (TTL less an election interval
// after the last successful attempt was sent) stops its services without
// waiting for the answer, so that they never run once another process
// can be elected; a renewal that then succeeds starts a fresh set, and a
// renewal in time keeps them. Before, a renewal held up (a cold pool
// connecting on a loaded box, in the chaos leader-failover test) left the old leader sweeping
// beside the new one until the answer came.
func TestLeadership_ServicesLapseBeforeTheLease(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const nServices = 3
	var running atomic.Int32
	started, ended := make(chan struct{}), make(chan struct{}, nServices)
	answers, attempts := make(chan bool), make(chan bool)
	tick := make(chan time.Time)
	ls := &lapses{armed: make(chan *lapse, 1)}
	terms := 0
	var lapsed atomic.Int32
	l := &leadership{
		attempt:   func(_ context.Context, leading bool) bool { attempts <- leading; return <-answers },
		resign:    func(context.Context) {},
		tick:      tick,
		hold:      time.Hour,
		afterFunc: ls.afterFunc,
		lapsed:    func() { lapsed.Add(1) },
		services: func() []service {
			terms++
			svcs := make([]service, nServices)
			for i := range svcs {
				svcs[i] = endingService{fakeService{running: &running, started: started}, ended}
			}
			return svcs
		},
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); l.run(ctx) }()
	waitN := func(ch <-chan struct{}, what string) {
		t.Helper()
		for i := range nServices {
			select {
			case <-ch:
			case <-time.After(5 * time.Second):
				t.Fatalf("%d of %d services %s after 5 s", i, nServices, what)
			}
		}
	}

	<-attempts
	answers <- true // elected
	waitN(started, "started")
	first := <-ls.armed
	tick <- time.Time{}
	<-attempts // the renewal is on its way: no answer yet
	first.fire()
	waitN(ended, "stopped at the lapse while the renewal was on its way")
	if n := running.Load(); n != 0 {
		t.Fatalf("%d services running after the lapse, want 0", n)
	}
	if n := lapsed.Load(); n != 1 {
		t.Fatalf("lapse reported %d times, want 1", n)
	}
	answers <- true // the late renewal succeeded: a fresh set
	waitN(started, "started again after the late renewal")
	second := <-ls.armed
	tick <- time.Time{}
	<-attempts
	answers <- true // a renewal in time: the same set, the lapse moved
	<-ls.armed
	second.fire() // the old lapse was stopped: nothing happens
	tick <- time.Time{}
	<-attempts
	if n := running.Load(); n != nServices || terms != 2 {
		t.Fatalf("%d services running over %d sets, want %d over 2", n, terms, nServices)
	}
	answers <- false
	waitN(ended, "stopped when leadership was lost")
	cancel()
	<-done
	if n := lapsed.Load(); n != 1 {
		t.Errorf("lapse reported %d times in all, want 1 (a loss or an end is not a lapse)", n)
	}
}

// endingService is a fakeService that also reports its end.
type endingService struct {
	fakeService
	ended chan<- struct{}
}

func (s endingService) run(ctx context.Context) {
	defer func() { s.ended <- struct{}{} }()
	s.fakeService.run(ctx)
}
