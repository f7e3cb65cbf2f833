package main

import (
	"testing"

	"github.com/docketq/docket"
)

// TestTenantSummary: the banner counts uploads and documents in words that
// agree with the number.
func TestTenantSummary(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tenant docket.Tenant
		want   string
	}{
		{docket.Tenant{ID: "t1", Plan: docket.PlanFree, Concurrency: 1},
			"t1 (free plan, 10 uploads per hour, 1 document at once)"},
		{docket.Tenant{ID: "t2", Plan: docket.PlanEnterprise, Concurrency: 4, RateLimit: 1},
			"t2 (enterprise plan, 1 upload per hour, 4 documents at once)"},
	} {
		if got := tenantSummary(&tc.tenant); got != tc.want {
			t.Errorf("tenantSummary(%+v) = %q, want %q", tc.tenant, got, tc.want)
		}
	}
}
