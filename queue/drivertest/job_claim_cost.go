package drivertest

import (
	"testing"

	"github.com/docketq/docket/queue/driver"
)

// testJobClaimCost checks the claim's fair shares by cost over weight
// (docs/claiming.md, "Fair shares"): the order of tenants is their
// virtual time, which a claim advances by the cost it took over the
// tenant's weight, and a tenant that comes back from idle starts at the
// queue's virtual time.
func (s *suite) testJobClaimCost(t *testing.T) {
	enqueueCost := func(f *fixture, tenant string, n, cost int) {
		f.t.Helper()
		ps := make([]*driver.JobInsertParams, n)
		for i := range ps {
			ps[i] = params(tenant)
			ps[i].Cost = cost
		}
		f.insert(ps...)
	}
	// drain claims rounds claims of max jobs, completing each job at once,
	// and returns the cost each tenant was given.
	drain := func(f *fixture, rounds, max int) map[string]int {
		f.t.Helper()
		got := map[string]int{}
		for range rounds {
			for _, j := range f.claim(testQueue, max, longLease) {
				got[j.TenantID] += j.Cost
				f.complete(j)
			}
		}
		return got
	}
	weight := func(f *fixture, tenant string, w int) {
		f.t.Helper()
		if err := f.x.TenantWeightSet(f.ctx, &driver.TenantWeightParams{TenantID: tenant, Weight: w}); err != nil {
			f.t.Fatalf("TenantWeightSet(%s, %d): %v", tenant, w, err)
		}
	}
	t.Run("CostStored", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		p := params("a")
		p.Cost = 7
		res := f.insert(p, params("a"))
		if c := f.get(res[0].Job.ID).Cost; c != 7 || res[0].Job.Cost != 7 {
			t.Fatalf("job inserted with cost 7: stored %d, returned %d", c, res[0].Job.Cost)
		}
		if c := f.get(res[1].Job.ID).Cost; c != 1 {
			t.Fatalf("job inserted without a cost has cost %d, want 1", c)
		}
	})
	// Max 1: the order alone decides. A tenant of cost-10 jobs and one of
	// cost-1 jobs get the same cost, within one job.
	t.Run("SharesByCost", func(t *testing.T) {
		t.Parallel()
		for _, max := range []int{1, 4, 10} {
			f := s.setup(t)
			f.queueConfig(testQueue, 100)
			enqueueCost(f, "big", 60, 10)
			enqueueCost(f, "small", 600, 1)
			got := drain(f, 400/max, max)
			// Two shares of slack per claim (the bound) and one big job.
			if d := got["big"] - got["small"]; d > 10+2*max || d < -(10+2*max) {
				t.Fatalf("claims of max %d gave cost %v; want equal shares of cost within %d", max, got, 10+2*max)
			}
		}
	})
	t.Run("SharesByWeight", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.queueConfig(testQueue, 100)
		enqueueCost(f, "a", 100, 1)
		enqueueCost(f, "b", 100, 1)
		weight(f, "b", 4)
		got := drain(f, 50, 1)
		if got["b"] < 39 || got["b"] > 41 {
			t.Fatalf("50 claims, weights 1 and 4, gave %v; want b 40 (4:1)", got)
		}
		// Back to weight 1: equal shares from here.
		weight(f, "b", 0)
		got = drain(f, 20, 1)
		if got["a"] < 9 || got["a"] > 11 {
			t.Fatalf("20 claims after b's weight went back to 1 gave %v; want 10 each", got)
		}
	})
	t.Run("WeightOfNewRow", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.queueConfig(testQueue, 100)
		weight(f, "b", 3) // before b has a claim row
		enqueueCost(f, "a", 40, 1)
		enqueueCost(f, "b", 40, 1)
		if got := drain(f, 40, 1); got["b"] < 29 || got["b"] > 31 {
			t.Fatalf("40 claims, weights 1 and 3 (set before the tenant's first job), gave %v; want b 30", got)
		}
	})
	// A tenant idle while others were served banks no credit: back with a
	// backlog, it shares with the others instead of taking every claim.
	t.Run("NoBurstAfterIdle", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.queueConfig(testQueue, 100)
		enqueueCost(f, "c", 1, 1)
		enqueueCost(f, "a", 100, 1)
		enqueueCost(f, "b", 100, 1)
		drain(f, 60, 1) // c's one job, then a and b 30 or so each
		enqueueCost(f, "c", 30, 1)
		got := drain(f, 9, 1)
		if got["c"] > 4 {
			t.Fatalf("9 claims after an idle tenant came back gave %v; want c about a third, not a burst", got)
		}
	})
}
