package search_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/search"
)

// knownAnswer is a query and the chunks ("document/index") that contain it.
type knownAnswer struct {
	kind    string // "word", "compound" (hyphenated) or "code" (digits or capitals)
	query   string
	answers map[string]bool
}

// terms returns the terms of a text: runs of letters and digits, and runs
// of them joined by single hyphens ("whip-poor-will"), as written.
func terms(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' }) {
		f = strings.Trim(f, "-")
		parts := strings.Split(f, "-")
		for _, p := range parts {
			if p != "" {
				out = append(out, p)
			}
		}
		if len(parts) > 1 && !slices.Contains(parts, "") {
			out = append(out, f)
		}
	}
	return out
}

func kindOf(term string) string {
	switch {
	case strings.Contains(term, "-"):
		return "compound"
	case strings.ContainsFunc(term, unicode.IsDigit) && strings.ContainsFunc(term, unicode.IsLetter),
		utf8.RuneCountInString(term) >= 2 && strings.ToUpper(term) == term && strings.ContainsFunc(term, unicode.IsLetter):
		return "code"
	}
	return "word"
}

// knownAnswers builds exact-term queries from the documents' text: terms
// of at least 4 characters (no function words, no bare numbers) found in
// 1 to 5 chunks, the answers being the chunks that contain the term, in
// any case. Words are sampled by a hash of the term (up to maxWords), every
// compound and code is kept.
func knownAnswers(docs map[string]corpusDoc, maxWords int) []knownAnswer {
	where := map[string]map[string]bool{} // lower-cased term → chunks
	written := map[string]string{}        // lower-cased term → as first written
	ids := make([]string, 0, len(docs))
	for id := range docs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		for _, c := range docs[id].chunks {
			key := fmt.Sprintf("%s/%d", id, c.Index)
			for _, t := range terms(c.Text) {
				lt := strings.ToLower(t)
				if where[lt] == nil {
					where[lt], written[lt] = map[string]bool{}, t
				}
				where[lt][key] = true
			}
		}
	}
	var out []knownAnswer
	words := 0
	keys := make([]string, 0, len(where))
	for lt := range where {
		keys = append(keys, lt)
	}
	slices.Sort(keys)
	for _, lt := range keys {
		chunks, t := where[lt], written[lt]
		if len(chunks) > 5 || utf8.RuneCountInString(lt) < 4 || embedding.IsStopword(lt) ||
			!strings.ContainsFunc(lt, unicode.IsLetter) {
			continue
		}
		kind := kindOf(t)
		if kind == "word" {
			h := fnv.New32a()
			h.Write([]byte(lt))
			if h.Sum32()%4 != 0 || words >= maxWords {
				continue
			}
			words++
		}
		out = append(out, knownAnswer{kind: kind, query: t, answers: chunks})
	}
	return out
}

// recallAt10 searches each query and returns the mean, over queries, of
// the share of its answers (at most 10) in the first 10 results, by kind
// and overall, and the queries that missed.
func recallAt10(tb testing.TB, s *search.Searcher, tenantID string, queries []knownAnswer) (map[string]float64, []string) {
	tb.Helper()
	sum, n := map[string]float64{}, map[string]int{}
	var missed []string
	for _, q := range queries {
		page, err := s.Search(context.Background(), &search.Params{TenantID: tenantID, Query: q.query, K: 10})
		if err != nil {
			tb.Fatalf("search %q: %v", q.query, err)
		}
		hit := 0
		for _, r := range page.Results {
			if q.answers[fmt.Sprintf("%s/%d", r.Chunk.DocumentID, r.Chunk.Index)] {
				hit++
			}
		}
		r := float64(hit) / float64(min(len(q.answers), 10))
		if r < 1 {
			missed = append(missed, fmt.Sprintf("%s %q: %d of %d (%d results)", q.kind, q.query, hit, len(q.answers), len(page.Results)))
		}
		for _, k := range []string{q.kind, "all"} {
			sum[k] += r
			n[k]++
		}
	}
	out := map[string]float64{}
	for k := range sum {
		out[k] = sum[k] / float64(n[k])
	}
	return out, missed
}

// TestSearch_Recall measures recall@10 of exact-term queries built from
// real documents, on both stores; the target is 0.95.
func TestSearch_Recall(t *testing.T) {
	t.Parallel()
	docs := loadCorpus(t)
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			s := &search.Searcher{Store: st.open(t), Embedder: embedding.NewHashing(0)}
			tenantID, byID := storeCorpus(t, s.Store, s.Embedder, docs)
			queries := knownAnswers(byID, 300)
			recall, missed := recallAt10(t, s, tenantID, queries)
			t.Logf("%d documents, %d queries; recall@10 %.3f (words %.3f, compounds %.3f, codes %.3f)", len(byID), len(queries),
				recall["all"], recall["word"], recall["compound"], recall["code"])
			for _, m := range missed {
				t.Logf("missed %s", m)
			}
			if recall["all"] < 0.95 {
				t.Errorf("recall@10 %.3f, want ≥ 0.95", recall["all"])
			}
			// Nonsense finds nothing.
			page, err := s.Search(context.Background(), &search.Params{TenantID: tenantID, Query: "xyzzyplugh", K: 10})
			if err != nil || len(page.Results) != 0 {
				t.Errorf("xyzzyplugh: %v, %v", page, err)
			}
		})
	}
}
