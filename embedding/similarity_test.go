package embedding

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestCosine(t *testing.T) {
	t.Parallel()
	nan := float32(math.NaN())
	tests := []struct {
		name string
		a, b []float32
		want float32
	}{
		{"identical", []float32{1, 2, 3}, []float32{1, 2, 3}, 1},
		{"scaled", []float32{1, 2, 3, 4, 5}, []float32{2, 4, 6, 8, 10}, 1},
		{"opposite", []float32{1, -2}, []float32{-1, 2}, -1},
		{"orthogonal", []float32{1, 0, 0, 0}, []float32{0, 1, 0, 0}, 0},
		{"45 degrees", []float32{1, 0}, []float32{1, 1}, float32(math.Sqrt2 / 2)},
		{"lengths differ", []float32{1, 2}, []float32{1, 2, 3}, 0},
		{"zero vector", []float32{0, 0}, []float32{1, 1}, 0},
		{"empty", nil, nil, 0},
		{"NaN stays NaN", []float32{nan, 1}, []float32{1, 1}, nan},
	}
	for _, tt := range tests {
		got := Cosine(tt.a, tt.b)
		if tt.want != tt.want {
			if got == got {
				t.Errorf("%s: got %v, want NaN", tt.name, got)
			}
			continue
		}
		if math.Abs(float64(got-tt.want)) > 1e-6 {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// bruteTopK is the obvious implementation TopK must agree with.
func bruteTopK(q []float32, vs [][]float32, k int) []Scored {
	var all []Scored
	for i, v := range vs {
		if len(v) != len(q) {
			continue
		}
		if s := Cosine(q, v); s == s {
			all = append(all, Scored{i, s})
		}
	}
	slices.SortStableFunc(all, func(a, b Scored) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return all[:min(k, len(all))]
}

func randomVectors(r *rand.Rand, n, dims int) [][]float32 {
	vs := make([][]float32, n)
	for i := range vs {
		vs[i] = make([]float32, dims)
		for j := range vs[i] {
			vs[i][j] = float32(r.NormFloat64())
		}
	}
	return vs
}

func TestTopK(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	vs := randomVectors(r, 500, 13)
	vs[7] = slices.Clone(vs[3])             // a tie
	vs[11] = make([]float32, 13)            // zero vector
	vs[12] = []float32{1, 2}                // wrong length
	vs[13][0] = float32(math.NaN())         // NaN
	vs[14] = append(slices.Clone(vs[3]), 1) // longer
	for _, k := range []int{1, 2, 5, 50, 499, 1000} {
		q := vs[3]
		got, want := TopK(q, vs, k), bruteTopK(q, vs, k)
		if !slices.Equal(got, want) {
			t.Fatalf("k=%d:\n got %v\nwant %v", k, got[:min(5, len(got))], want[:min(5, len(want))])
		}
	}
	if got := TopK(vs[0], vs, 3); got[0].Index != 0 || math.Abs(float64(got[0].Score-1)) > 1e-6 {
		t.Fatalf("a vector's nearest is not itself: %v", got)
	}
	for _, k := range []int{0, -1} {
		if got := TopK(vs[0], vs, k); got != nil {
			t.Fatalf("k=%d: %v", k, got)
		}
	}
	if got := TopK(vs[0], nil, 3); got != nil {
		t.Fatalf("no vectors: %v", got)
	}
}

func BenchmarkTopK(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{10_000, 100_000} {
		vs := randomVectors(r, n, 256)
		q := randomVectors(r, 1, 256)[0]
		b.Run(benchName(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				TopK(q, vs, 10)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "vectors/s")
		})
	}
}

func benchName(n int) string { return fmt.Sprintf("%dk×256", n/1000) }
