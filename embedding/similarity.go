package embedding

import (
	"math"
	"slices"
)

// Scored is a vector's position in the searched slice and its cosine
// similarity to the query.
type Scored struct {
	Index int
	Score float32
}

// Cosine returns the cosine similarity of a and b, in [-1, 1]. It returns 0
// if their lengths differ or either is the zero vector.
func Cosine(a, b []float32) float32 {
	if len(a) != len(b) {
		return 0
	}
	dot, na, nb := dotNorms(a, b)
	if na == 0 || nb == 0 {
		return 0
	}
	return clamp(float32(float64(dot) / math.Sqrt(float64(na)*float64(nb))))
}

// TopK returns the k vectors most similar to query by cosine similarity,
// best first, ties in index order. It searches exhaustively. Vectors whose
// length differs from the query's are skipped; zero vectors score 0.
func TopK(query []float32, vectors [][]float32, k int) []Scored {
	if k <= 0 || len(vectors) == 0 {
		return nil
	}
	_, qq := dotNorm(query, query)
	qn := math.Sqrt(float64(qq))
	h := make(minHeap, 0, min(k, len(vectors)))
	for i, v := range vectors {
		if len(v) != len(query) {
			continue
		}
		var s float32
		if dot, vv := dotNorm(query, v); qn != 0 && vv != 0 {
			s = clamp(float32(float64(dot) / (qn * math.Sqrt(float64(vv)))))
		}
		if s != s { // NaN from NaN or Inf components
			continue
		}
		switch {
		case len(h) < k:
			h.push(Scored{i, s})
		case s > h[0].Score: // a later equal score never beats an earlier one
			h[0] = Scored{i, s}
			h.down(0)
		}
	}
	slices.SortFunc(h, func(a, b Scored) int {
		if worse(a, b) {
			return 1
		}
		if worse(b, a) {
			return -1
		}
		return 0
	})
	return h
}

// dotNorms returns a·b, a·a and b·b.
func dotNorms(a, b []float32) (dot, aa, bb float32) {
	dot, bb = dotNorm(a, b)
	_, aa = dotNorm(a, a)
	return dot, aa, bb
}

// dotNorm returns a·b and b·b for len(b) ≥ len(a). The loop is unrolled by
// four with separate sums, which lets the processor overlap the additions.
func dotNorm(a, b []float32) (dot, bb float32) {
	b = b[:len(a)]
	var d0, d1, d2, d3, n0, n1, n2, n3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x0, x1, x2, x3 := b[i], b[i+1], b[i+2], b[i+3]
		d0 += a[i] * x0
		d1 += a[i+1] * x1
		d2 += a[i+2] * x2
		d3 += a[i+3] * x3
		n0 += x0 * x0
		n1 += x1 * x1
		n2 += x2 * x2
		n3 += x3 * x3
	}
	for ; i < len(a); i++ {
		d0 += a[i] * b[i]
		n0 += b[i] * b[i]
	}
	return d0 + d1 + d2 + d3, n0 + n1 + n2 + n3
}

// clamp keeps rounding from pushing a similarity past ±1.
func clamp(s float32) float32 {
	return max(-1, min(1, s))
}

// worse orders results: a lower score, or an equal score at a later index.
func worse(a, b Scored) bool {
	return a.Score < b.Score || a.Score == b.Score && a.Index > b.Index
}

// minHeap keeps the k best results with the worst at the root.
type minHeap []Scored

func (h *minHeap) push(s Scored) {
	*h = append(*h, s)
	for i := len(*h) - 1; i > 0; {
		p := (i - 1) / 2
		if !worse((*h)[i], (*h)[p]) {
			break
		}
		(*h)[i], (*h)[p] = (*h)[p], (*h)[i]
		i = p
	}
}

func (h minHeap) down(i int) {
	for {
		l, small := 2*i+1, i
		if l < len(h) && worse(h[l], h[small]) {
			small = l
		}
		if r := l + 1; r < len(h) && worse(h[r], h[small]) {
			small = r
		}
		if small == i {
			return
		}
		h[i], h[small] = h[small], h[i]
		i = small
	}
}
