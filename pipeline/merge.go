package pipeline

import (
	"fmt"
	"slices"

	"github.com/docketq/docket/pipeline/analyze"
	"github.com/docketq/docket/pipeline/extract"
)

// merge makes the document's fields, warnings and chunk count of its
// steps' results, in page order: the title is the first range's (its
// analysis had the document's metadata and first page), the language the
// one of the range with the most words, counts are summed, dates and
// amounts kept in order of first appearance, and key phrases taken in
// turn from each range's best.
func (j *job) merge(results []*RangeResult) {
	slices.SortFunc(results, func(a, b *RangeResult) int { return a.First - b.First })
	var (
		// The lists are empty, not nil, as one job's analysis has them.
		f        = analyze.Fields{Dates: []string{}, Amounts: []analyze.Amount{}, KeyPhrases: []string{}}
		phrases  [][]string
		mostWord = -1
		seen     = map[string]bool{}
	)
	j.warns = []string{} // never nil once processed
	blank := !slices.ContainsFunc(results, func(r *RangeResult) bool { return !slices.Contains(r.Warnings, extract.WarnNoTextLayer) })
	for _, r := range results {
		rf := &r.Fields
		if f.Title == "" {
			f.Title = rf.Title
		}
		if rf.WordCount > mostWord {
			f.Language, mostWord = rf.Language, rf.WordCount
		}
		f.PageCount = max(f.PageCount, r.Last)
		f.WordCount += rf.WordCount
		f.Dates = appendNew(f.Dates, rf.Dates, seen, func(s string) string { return "d" + s })
		for _, a := range rf.Amounts {
			if k := "a" + a.Currency + " " + a.Value; !seen[k] {
				seen[k] = true
				f.Amounts = append(f.Amounts, analyze.Amount{Value: a.Value, Currency: a.Currency})
			}
		}
		phrases = append(phrases, rf.KeyPhrases)
		j.nchunk += r.Chunks
		j.active = j.active || r.Active
		if j.dims == 0 {
			j.dims = r.Dimensions
		}
		j.warns = appendNew(j.warns, rangeWarnings(r, blank), seen, func(s string) string { return "w" + s })
	}
	f.KeyPhrases = append(f.KeyPhrases, interleave(phrases, seen)...)
	j.analysis, j.pages = f, f.PageCount
	j.fields = fieldsOf(f)
	j.fields.ChunkCount = j.nchunk
	j.fields.EmbeddingModel = j.p.cfg.Embedder.Model()
	j.fields.EmbeddingDimensions = embeddingDims(j.p.cfg.Embedder, j.dims)
	j.fields.ActiveContent = j.active
}

// rangeWarnings returns r's warnings as the document's: a range without
// any text layer is named by its pages unless every range is without one
// (blank: the document then has extract's warning once).
func rangeWarnings(r *RangeResult, blank bool) []string {
	out := make([]string, len(r.Warnings))
	for i, w := range r.Warnings {
		if w == extract.WarnNoTextLayer && !blank {
			w = fmt.Sprintf("pages %d-%d: %s", r.First, r.Last, w)
		}
		out[i] = w
	}
	return out
}

// appendNew appends the items of add whose key is not in seen yet, and
// records them.
func appendNew(to, add []string, seen map[string]bool, key func(string) string) []string {
	for _, s := range add {
		if k := key(s); !seen[k] {
			seen[k] = true
			to = append(to, s)
		}
	}
	return to
}

// interleave takes the lists' items in turn (each list's first, then
// each one's second...), without repeats, as many as the longest list
// has.
func interleave(lists [][]string, seen map[string]bool) []string {
	longest := 0
	for _, l := range lists {
		longest = max(longest, len(l))
	}
	var out []string
	for i := 0; len(out) < longest && i < longest; i++ {
		for _, l := range lists {
			if i < len(l) && len(out) < longest {
				out = appendNew(out, l[i:i+1], seen, func(s string) string { return "k" + s })
			}
		}
	}
	return out
}
