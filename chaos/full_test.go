//go:build chaos

package chaos

import (
	"testing"
	"time"
)

// The full-size variants of the reliability plan's chaos tests, for the
// nightly tier (`go test -tags chaos -timeout 45m ./chaos/...`).

// TestKillStorm_Full is test 13: 100,000 jobs across 50 tenants, 4 workers
// × 8, a random worker SIGKILLed every 2 s for 60 s, lease 5 s, rescuer
// every 1 s.
func TestKillStorm_Full(t *testing.T) {
	runStorm(t, stormConfig{
		jobs: 100_000, tenants: 50, procs: 4, slots: 8,
		storm: 60 * time.Second, every: 2 * time.Second,
		lease: 5 * time.Second, rescue: time.Second,
		drain: 5 * time.Minute, batch: 500,
	})
}

// TestPoisonPill_Full is test 12 at full size: the pill among 2,000 normal
// jobs.
func TestPoisonPill_Full(t *testing.T) {
	runPoison(t, 2000, 2*time.Minute)
}

// TestTenantStarvation_Full is test 30 at full size: tenant A floods 50,000
// jobs of 10 ms, 4 workers × 8.
func TestTenantStarvation_Full(t *testing.T) {
	runStarvation(t, starvationConfig{
		flood: 50_000, others: 25, perOther: 10, procs: 4, slots: 8,
		p95: 2 * time.Second, aloneShare: 0.35, drain: 10 * time.Minute,
	})
}
