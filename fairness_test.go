package docket_test

import (
	"errors"
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

func TestPlan_Weight(t *testing.T) {
	want := map[docket.Plan]int{docket.PlanFree: 1, docket.PlanStarter: 2, docket.PlanPro: 4, docket.PlanEnterprise: 8}
	for _, p := range docket.Plans {
		if got := p.Weight(); got != want[p] {
			t.Errorf("%s.Weight() = %d, want %d", p, got, want[p])
		}
	}
}

func TestDocumentCost(t *testing.T) {
	for _, c := range []struct {
		size int64
		want int
	}{{0, 1}, {1, 1}, {64 << 10, 1}, {64<<10 + 1, 2}, {10 << 20, 160}, {1 << 62, queue.MaxCost}} {
		if got := docket.DocumentCost(c.size); got != c.want {
			t.Errorf("DocumentCost(%d) = %d, want %d", c.size, got, c.want)
		}
	}
}

// TestTenant_EffectiveWeight: a tenant's own weight overrides its plan's;
// 0 is the plan's.
func TestTenant_EffectiveWeight(t *testing.T) {
	for _, c := range []struct {
		plan   docket.Plan
		weight int
		want   int
	}{
		{docket.PlanFree, 0, 1},
		{docket.PlanEnterprise, 0, 8},
		{docket.PlanEnterprise, 3, 3},
		{docket.PlanFree, docket.MaxTenantWeight, docket.MaxTenantWeight},
	} {
		tn := &docket.Tenant{Plan: c.plan, Weight: c.weight}
		if got := tn.EffectiveWeight(); got != c.want {
			t.Errorf("plan %s, weight %d: EffectiveWeight() = %d, want %d", c.plan, c.weight, got, c.want)
		}
	}
}

// TestValidateTenant_Weight: a weight of 0 (the plan's) to MaxTenantWeight
// is valid, anything else ErrInvalid.
func TestValidateTenant_Weight(t *testing.T) {
	for w, ok := range map[int]bool{0: true, 1: true, docket.MaxTenantWeight: true, -1: false, docket.MaxTenantWeight + 1: false} {
		err := docket.ValidateTenant(&docket.Tenant{ID: "t", Name: "t", Plan: docket.PlanFree, Concurrency: 1, Weight: w})
		if got := err == nil; got != ok || !ok && !errors.Is(err, docket.ErrInvalid) {
			t.Errorf("weight %d: %v, want valid %t (else ErrInvalid)", w, err, ok)
		}
	}
}
