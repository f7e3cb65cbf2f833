package docket_test

import (
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
