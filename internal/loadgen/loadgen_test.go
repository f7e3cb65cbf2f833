package loadgen

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

// TestPlan: a flood gets its share, spread through the run; the others
// share the rest evenly; without a flood every tenant gets the same.
func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		tenants, docs int
		flood         float64
		want          []int // documents per tenant
	}{
		{4, 24, 0.5, []int{12, 4, 4, 4}},
		{3, 9, 0, []int{3, 3, 3}},
		{2, 10, 0.9, []int{9, 1}},
	} {
		ts := make([]*tenant, tc.tenants)
		for i := range ts {
			ts[i] = &tenant{id: string(rune('a' + i))}
		}
		cfg := &Config{Documents: tc.docs, Flood: tc.flood}
		ups := plan(cfg, ts)
		got := make([]int, tc.tenants)
		firstHalf := 0
		for i, u := range ups {
			got[u.tenant.id[0]-'a']++
			if u.tenant == ts[0] && i < len(ups)/2 {
				firstHalf++
			}
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%+v: documents per tenant %v, want %v", tc, got, tc.want)
				break
			}
		}
		if tc.flood > 0 && math.Abs(float64(firstHalf)-float64(tc.want[0])/2) > 1 {
			t.Errorf("%+v: the flood uploads %d of its %d in the first half, want about half", tc, firstHalf, tc.want[0])
		}
	}
}

func TestJain(t *testing.T) {
	if j := jain([]float64{2, 2, 2}); math.Abs(j-1) > 1e-9 {
		t.Errorf("equal rates: %g, want 1", j)
	}
	if j := jain([]float64{1, 0, 0, 0}); math.Abs(j-0.25) > 1e-9 {
		t.Errorf("one tenant served: %g, want 1/4", j)
	}
	if j := jain(nil); j != 0 {
		t.Errorf("no tenants: %g", j)
	}
}

func TestLatency_JSON(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	l := summarise(ds)
	if l.N != 100 || l.P50 != 50*time.Millisecond || l.P95 != 95*time.Millisecond || l.P99 != 99*time.Millisecond || l.Max != 100*time.Millisecond {
		t.Fatalf("summary %+v", l)
	}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var back Latency
	if err := json.Unmarshal(b, &back); err != nil || back != l {
		t.Fatalf("round trip %s: %+v, %v; want %+v", b, back, err, l)
	}
}

func TestConfig_Invalid(t *testing.T) {
	for _, c := range []Config{
		{},
		{BaseURL: "http://x"},
		{BaseURL: "http://x", AdminKey: "k", Flood: 1},
		{BaseURL: "http://x", AdminKey: "k", Flood: 0.5, Tenants: 1},
		{BaseURL: "http://x", AdminKey: "k", Documents: -1},
	} {
		if err := c.setDefaults(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}
