package httpapi

import "testing"

func TestAdmin_Percentiles(t *testing.T) {
	t.Parallel()
	if p := percentiles(nil); p.P50 != nil || p.P95 != nil || p.P99 != nil {
		t.Errorf("percentiles(nil) = %+v, want nulls", p)
	}
	xs := make([]float64, 0, 100)
	for i := 100; i >= 1; i-- { // unsorted on purpose
		xs = append(xs, float64(i))
	}
	for _, tc := range []struct {
		xs            []float64
		p50, p95, p99 float64
	}{
		{[]float64{7}, 7, 7, 7},
		{[]float64{3, 1, 2}, 2, 3, 3},
		{xs, 50, 95, 99},
	} {
		p := percentiles(tc.xs)
		if *p.P50 != tc.p50 || *p.P95 != tc.p95 || *p.P99 != tc.p99 {
			t.Errorf("percentiles(%d values) = %v %v %v, want %v %v %v", len(tc.xs), *p.P50, *p.P95, *p.P99, tc.p50, tc.p95, tc.p99)
		}
	}
}
