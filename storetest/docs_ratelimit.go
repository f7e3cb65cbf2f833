package storetest

import (
	"sync"
	"time"

	"github.com/docketq/docket"
)

func rateLimitChecks() []docCheck {
	return []docCheck{
		{"TakeUntilRefused", checkRateTake},
		{"PeekDoesNotTake", checkRatePeek},
		{"Concurrent", checkRateConcurrent},
		{"WindowPasses", checkRateWindow},
	}
}

func (f *docFixture) take(tenant string, p *docket.RateLimitParams) *docket.RateLimit {
	f.t.Helper()
	var rl *docket.RateLimit
	f.write(tenant, func(tx docket.Tx) (err error) {
		rl, err = tx.RateLimitTake(f.ctx, p)
		return err
	})
	return rl
}

func (f *docFixture) peek(tenant string, p *docket.RateLimitParams) *docket.RateLimit {
	f.t.Helper()
	var rl *docket.RateLimit
	f.write(tenant, func(tx docket.Tx) (err error) {
		rl, err = tx.RateLimitPeek(f.ctx, p)
		return err
	})
	return rl
}

// wantWindow fails the check unless rl reports the window consistently:
// Limit as asked, RetryAfter in (0, window] exactly when no slot is left.
func (f *docFixture) wantWindow(what string, rl *docket.RateLimit, p *docket.RateLimitParams, allowed bool, remaining int) {
	f.t.Helper()
	if rl.Allowed != allowed || rl.Limit != p.Limit || rl.Remaining != remaining {
		f.t.Fatalf("%s = %+v, want Allowed %v, Limit %d, Remaining %d", what, rl, allowed, p.Limit, remaining)
	}
	switch {
	case remaining > 0 && rl.RetryAfter != 0:
		f.t.Fatalf("%s: RetryAfter %v with %d slots left, want 0", what, rl.RetryAfter, remaining)
	case remaining == 0 && (rl.RetryAfter <= 0 || rl.RetryAfter > p.Window):
		f.t.Fatalf("%s: RetryAfter %v with no slot left, want in (0, %v]", what, rl.RetryAfter, p.Window)
	}
}

func checkRateTake(f *docFixture) {
	tn := f.tenant("a")
	p := &docket.RateLimitParams{Limit: 3, Window: time.Hour}
	for i := range 3 {
		f.wantWindow("take", f.take(tn.ID, p), p, true, 2-i)
	}
	for range 2 {
		f.wantWindow("take beyond the limit", f.take(tn.ID, p), p, false, 0)
	}
	// A larger limit on the same window counts the slots already taken.
	bigger := &docket.RateLimitParams{Limit: 5, Window: time.Hour}
	f.wantWindow("take with limit 5", f.take(tn.ID, bigger), bigger, true, 1)
}

func checkRatePeek(f *docFixture) {
	tn := f.tenant("a")
	p := &docket.RateLimitParams{Limit: 2, Window: time.Hour}
	for range 3 {
		f.wantWindow("peek of an unused window", f.peek(tn.ID, p), p, false, 2)
	}
	f.take(tn.ID, p)
	f.wantWindow("peek after one take", f.peek(tn.ID, p), p, false, 1)
	f.wantWindow("peek after one take, again", f.peek(tn.ID, p), p, false, 1)
	f.take(tn.ID, p)
	f.wantWindow("peek of a full window", f.peek(tn.ID, p), p, false, 0)
}

// checkRateConcurrent takes from many transactions at once: exactly the
// limit is allowed.
func checkRateConcurrent(f *docFixture) {
	tn := f.tenant("a")
	const takers, limit = 20, 5
	p := &docket.RateLimitParams{Limit: limit, Window: time.Hour}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		allowed int
	)
	for range takers {
		wg.Go(func() {
			err := f.s.InTenant(f.ctx, tn.ID, func(tx docket.Tx) error {
				rl, err := tx.RateLimitTake(f.ctx, p)
				if err == nil && rl.Allowed {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
				return err
			})
			if err != nil {
				f.t.Errorf("concurrent RateLimitTake: %v", err)
			}
		})
	}
	wg.Wait()
	if f.t.Failed() {
		return
	}
	if allowed != limit {
		f.t.Fatalf("%d concurrent takes with limit %d: %d allowed, want exactly %d", takers, limit, allowed, limit)
	}
	f.wantWindow("peek after the concurrent takes", f.peek(tn.ID, p), p, false, 0)
}

// checkRateWindow lets a short window pass: its slots free again.
func checkRateWindow(f *docFixture) {
	tn := f.tenant("a")
	p := &docket.RateLimitParams{Limit: 2, Window: 300 * time.Millisecond}
	// Take until refused: on a slow machine the window may pass meanwhile.
	refused := false
	for i := 0; i < 50 && !refused; i++ {
		rl := f.take(tn.ID, p)
		if refused = !rl.Allowed; refused {
			f.wantWindow("take in a full short window", rl, p, false, 0)
		}
	}
	if !refused {
		f.t.Fatal("50 takes of a window of 2 in 300ms: none refused")
	}
	dEventually(f.t, "a slot of the 300ms window to free", func() bool {
		return f.take(tn.ID, p).Allowed
	})
}
