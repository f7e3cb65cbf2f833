package queue_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// A claim that takes a tenant's last pending job marks the tenant idle at
// once, so a later claim never comes back empty while another tenant has a
// pending job: the tenants t0..t2 each lose their only job to the first
// claim, and then each claim of one job must find z's.
func TestJobClaim_NoEmptyClaimWhilePending(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		if s.driver.Capabilities().MultiProcess {
			// The PostgreSQL half of this fix (pick wanted+1 jobs per tenant,
			// mark idle when all picked were claimed) halved drain throughput
			// (9k vs 19k jobs/s side by side) and was reverted; the flag stays
			// lazy there: the claim's rewake and the schedule sweep's repair
			// keep a tenant with work claimable (docs/claiming.md).
			t.Skip("postgres: has_work is cleared lazily (exact flag reverted for throughput)")
		}
		ctx := context.Background()
		x := s.driver.Executor()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		claim := func(max int) []*queue.Job {
			t.Helper()
			jobs, _, err := x.JobClaim(ctx, &driver.JobClaimParams{Queue: queue.DefaultQueue, WorkerID: "w", Max: max, LeaseDuration: time.Minute})
			if err != nil {
				t.Fatalf("claim: %v", err)
			}
			return jobs
		}
		for _, tenant := range []string{"t0", "t1", "t2", "z"} {
			if err := x.TenantLimitSet(ctx, &driver.TenantLimitParams{TenantID: tenant, Queue: queue.DefaultQueue, MaxRunning: 10}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 3 {
			enqueue(t, c, &queue.EnqueueParams{Kind: "work", TenantID: fmt.Sprintf("t%d", i)})
		}
		if got := claim(3); len(got) != 3 {
			t.Fatalf("first claim got %d jobs, want 3", len(got))
		}
		enqueue(t, c, &queue.EnqueueParams{Kind: "work", TenantID: "z"})
		enqueue(t, c, &queue.EnqueueParams{Kind: "work", TenantID: "z"})
		for i := range 2 {
			got := claim(1)
			if len(got) != 1 || got[0].TenantID != "z" {
				t.Errorf("claim %d of one job got %d jobs while z has pending ones", i+1, len(got))
			}
		}
	})
}
