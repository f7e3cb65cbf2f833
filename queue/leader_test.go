package queue

import (
	"context"
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
		resign: func(context.Context) { resigned <- running.Load() },
		tick:   tick,
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
		attempt: func(_ context.Context, leading bool) bool { calls <- leading; return false },
		resign:  func(context.Context) { t.Error("resigned without leading") },
		tick:    tick,
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
