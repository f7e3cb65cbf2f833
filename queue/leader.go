package queue

import (
	"context"
	"sync"
	"time"
)

// service is one part of maintenance that the leader runs: run does its
// work until ctx ends and returns only then (or sooner, having nothing to
// do). The rescuer, the scheduler, the cleaner and the periodic enqueuer
// are services (maintain_services.go).
type service interface {
	run(ctx context.Context)
}

// leadership seeks and renews leadership on every tick and runs the
// services while it holds it: it starts a fresh set on gaining it, and on
// losing it (or when ctx ends) cancels them and waits until every one has
// returned, before it seeks leadership again (or resigns). Only one
// goroutine runs it.
type leadership struct {
	// attempt seeks leadership (leading false) or renews it (true) and
	// reports whether this process leads now.
	attempt func(ctx context.Context, leading bool) bool
	// resign gives leadership up when ctx ends while leading, after the
	// services have stopped.
	resign func(ctx context.Context)
	// tick says when to seek or renew again.
	tick <-chan time.Time
	// services returns a term's services, fresh for each term.
	services func() []service
	// hold is how long the services may run after the last successful
	// attempt was sent without another success: less than the TTL (see
	// leaderHold), so that they have stopped before the lease can run out
	// and another process be elected, even while a renewal is still on its
	// way (a pool slow to connect, a loaded server).
	hold time.Duration
	// afterFunc is time.AfterFunc; tests fire the lapse themselves.
	afterFunc func(d time.Duration, f func()) (stop func() bool)
	// lapsed, when set, is called when a term's services lapse (the
	// maintenance pauses until a renewal succeeds).
	lapsed func()
}

// run runs until ctx ends.
func (l *leadership) run(ctx context.Context) {
	var cur *term // non-nil while leading
	defer func() {
		if cur != nil {
			cur.end()
			l.resign(ctx)
		}
	}()
	for {
		sent := time.Now()
		leading := l.attempt(ctx, cur != nil)
		left := l.hold - time.Since(sent)
		if cur != nil && (!leading || !cur.extend(left)) {
			cur.end() // lost, or its services lapsed while the renewal was on its way
			cur = nil
		}
		if leading && cur == nil {
			cur = l.start(ctx, left)
		}
		select {
		case <-ctx.Done():
			return
		case <-l.tick:
		}
	}
}

// term is the services of one stretch of leadership, cancelled when it
// is lost or when they lapse (hold after the last successful attempt).
type term struct {
	stop      func() // cancels the services and waits for them to return
	stopLapse func() bool
	lapse     func(time.Duration, func()) func() bool
	cancel    func()
	fire      func() // what the lapse does: cancel, and report it
}

// start runs a fresh set of services that lapse in d unless extended.
func (l *leadership) start(ctx context.Context, d time.Duration) *term {
	ctx, cancel := context.WithCancel(ctx)
	t := &term{stop: startServices(ctx, l.services()), lapse: l.afterFunc, cancel: cancel, fire: cancel}
	if l.lapsed != nil {
		t.fire = func() { cancel(); l.lapsed() }
	}
	t.stopLapse = t.lapse(d, t.fire)
	return t
}

// extend moves the lapse to d from now and reports true, or reports false
// when the services have lapsed already.
func (t *term) extend(d time.Duration) bool {
	if !t.stopLapse() {
		return false
	}
	t.stopLapse = t.lapse(d, t.fire)
	return true
}

// end cancels the services and waits until every one has returned.
func (t *term) end() {
	t.stopLapse()
	t.cancel()
	t.stop()
}

// leaderHold is how long the services run after a successful election
// attempt was sent: the TTL less one election interval (at most half the
// TTL), the time a sweep in flight has to end after its cancellation
// before the lease can run out. The lease, by the database's clock, runs
// at least TTL from the moment the attempt reached the server, after it
// was sent.
func leaderHold(ttl, elect time.Duration) time.Duration {
	return ttl - min(elect, ttl/2)
}

// afterFunc is time.AfterFunc as leadership.afterFunc.
func afterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// startServices runs each service on its own goroutine and returns the
// function that cancels them and waits for all of them to return.
func startServices(ctx context.Context, svcs []service) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, s := range svcs {
		wg.Go(func() { s.run(ctx) })
	}
	return func() {
		cancel()
		wg.Wait()
	}
}
