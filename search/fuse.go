package search

import (
	"slices"

	"github.com/docketq/docket"
	"github.com/docketq/docket/embedding"
)

// rrfK is reciprocal-rank fusion's constant (Cormack et al. 2009): a rank
// r counts 1/(rrfK + r), so the first few ranks of either list differ
// little and neither list's scale matters.
const rrfK = 60

// Fuse ranks hits (best lexical first) by reciprocal-rank fusion of their
// lexical rank and their rank by cosine similarity to query among the
// hits that carry a vector of its length. A hit without one counts its
// lexical rank only. Ties keep the lexical order.
func Fuse(hits []*docket.SearchHit, query []float32) []Result {
	out := make([]Result, len(hits))
	var withVec []int
	cos := make([]float32, len(hits))
	for i, h := range hits {
		out[i] = Result{Chunk: h.Chunk, Filename: h.Filename, Score: 1.0 / float64(rrfK+i+1)}
		if len(h.Chunk.Vector) == len(query) && len(query) > 0 {
			withVec = append(withVec, i)
			cos[i] = embedding.Cosine(query, h.Chunk.Vector)
		}
	}
	slices.SortStableFunc(withVec, func(a, b int) int {
		switch {
		case cos[a] > cos[b]:
			return -1
		case cos[a] < cos[b]:
			return 1
		}
		return 0
	})
	for r, i := range withVec {
		out[i].Score += 1.0 / float64(rrfK+r+1)
	}
	slices.SortStableFunc(out, func(a, b Result) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return out
}
