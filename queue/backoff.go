package queue

import (
	"math/rand/v2"
	"time"
)

// Backoff returns the delay before retrying after the given failed attempt
// (1 for the first).
type Backoff func(attempt int) time.Duration

// ExponentialBackoff returns a Backoff that doubles from base up to ceiling,
// with ±25% jitter so retries of many jobs spread out.
func ExponentialBackoff(base, ceiling time.Duration) Backoff {
	return func(attempt int) time.Duration {
		d := base
		for i := 1; i < attempt && d < ceiling; i++ {
			d *= 2
		}
		d = min(d, ceiling)
		jitter := time.Duration(rand.Int64N(int64(d)/2+1)) - d/4
		return max(d+jitter, 0)
	}
}
