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
}

// run runs until ctx ends.
func (l *leadership) run(ctx context.Context) {
	var stop func() // non-nil while leading: stops the term's services
	defer func() {
		if stop != nil {
			stop()
			l.resign(ctx)
		}
	}()
	for {
		switch leading := l.attempt(ctx, stop != nil); {
		case leading && stop == nil:
			stop = startServices(ctx, l.services())
		case !leading && stop != nil:
			stop()
			stop = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-l.tick:
		}
	}
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
