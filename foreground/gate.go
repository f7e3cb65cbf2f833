// Package foreground lets a process's background work step aside while it
// serves requests.
//
// A server counts the requests it is answering with Gate.Enter; background
// work that competes with them for the same cores and, on SQLite, the same
// single writer (a long document's chunks saved batch after batch) calls
// Gate.Wait before each step, which returns once no request is being
// answered or after a bound, so that the work never stops for long. A nil
// *Gate does nothing.
package foreground

import (
	"context"
	"sync/atomic"
	"time"
)

// Gate counts the requests in progress. The zero value is ready.
type Gate struct {
	active atomic.Int64
}

// Enter marks a request as being answered until the returned function is
// called.
func (g *Gate) Enter() (leave func()) {
	if g == nil {
		return func() {}
	}
	g.active.Add(1)
	return func() { g.active.Add(-1) }
}

// Busy reports whether a request is being answered.
func (g *Gate) Busy() bool { return g != nil && g.active.Load() > 0 }

// poll is how often Wait looks again.
const poll = time.Millisecond

// Wait returns once no request is being answered, after at most max, or
// with ctx's error when ctx ends first.
func (g *Gate) Wait(ctx context.Context, max time.Duration) error {
	if !g.Busy() {
		return ctx.Err()
	}
	deadline := time.Now().Add(max)
	t := time.NewTicker(poll)
	defer t.Stop()
	for g.Busy() && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return ctx.Err()
}
