package search

import (
	"fmt"
	"strings"
	"testing"

	"github.com/docketq/docket"
)

func TestPhrases(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"CUDA", []string{"CUDA"}},
		{"whip-poor-will", []string{"whip-poor-will"}},
		{"  the whip-poor-will, (CUDA)!  ", []string{"whip-poor-will", "CUDA"}},
		{`"walden pond" thoreau`, []string{"walden pond", "thoreau"}},
		{`"  spaced   out  "`, []string{"spaced out"}},
		{"to be or not to be", []string{"to", "be", "or", "not", "to", "be"}},
		{"die Kugeloberfläche", []string{"Kugeloberfläche"}},
		{"--- ??? ...", nil},
		{`"" "-"`, nil},
		{`unclosed "quote here`, []string{"quote here", "unclosed"}},
		{"v1.2 O'Brien", []string{"v1.2", "O'Brien"}},
	} {
		if got := Phrases(tc.q); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("Phrases(%q) = %q, want %q", tc.q, got, tc.want)
		}
	}
	if n := len(Phrases(strings.Repeat("word ", 100))); n != MaxPhrases {
		t.Errorf("100 words: %d phrases, want %d", n, MaxPhrases)
	}
}

func TestSnippet(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("filler ", 30) + "the Payments <due> & CUDA kernels " + strings.Repeat("tail ", 30)
	for _, tc := range []struct {
		text    string
		phrases []string
		want    string
	}{
		{"Invoice payment due", []string{"payment"}, "Invoice <mark>payment</mark> due"},
		{"All payments were received", []string{"payment"}, "All <mark>payments</mark> were received"},
		{"pay the bill", []string{"payment"}, "pay the bill"},
		{"a <b> & c", []string{"b"}, "a &lt;<mark>b</mark>&gt; &amp; c"},
		{"The whip-poor-will sang", []string{"whip-poor-will"}, "The <mark>whip</mark>-<mark>poor</mark>-<mark>will</mark> sang"},
		{long, []string{"cuda", "payment"}, "… filler filler filler filler filler filler filler the <mark>Payments</mark> &lt;due&gt; &amp; <mark>CUDA</mark> kernels" +
			strings.Repeat(" tail", 28) + " …"},
		{"", []string{"x"}, ""},
	} {
		if got := Snippet(tc.text, tc.phrases); got != tc.want {
			t.Errorf("Snippet(%.40q, %q) =\n%q\nwant\n%q", tc.text, tc.phrases, got, tc.want)
		}
	}
}

func TestFuse(t *testing.T) {
	t.Parallel()
	hit := func(i int, vec ...float32) *docket.SearchHit {
		return &docket.SearchHit{Chunk: &docket.Chunk{Index: i, Vector: vec}}
	}
	query := []float32{1, 0}
	// Lexical order 0, 1, 2, 3; by vector 2 is nearest, then 1, then 0; 3 has none.
	got := Fuse([]*docket.SearchHit{hit(0, 0, 1), hit(1, 1, 1), hit(2, 1, 0), hit(3)}, query)
	var order []int
	for _, r := range got {
		order = append(order, r.Chunk.Index)
	}
	// 0: 1/61+1/63, 1: 1/62+1/62, 2: 1/63+1/61, 3: 1/64 — 1 and the two
	// others tie within rounding; stable order keeps the lexical one.
	if order[3] != 3 || got[0].Score < got[1].Score || got[1].Score < got[2].Score {
		t.Errorf("order %v, scores %v %v %v %v", order, got[0].Score, got[1].Score, got[2].Score, got[3].Score)
	}
	// Vectors agree with the lexical order: it stands.
	got = Fuse([]*docket.SearchHit{hit(0, 1, 0), hit(1, 1, 1), hit(2, 0, 1)}, query)
	for i, r := range got {
		if r.Chunk.Index != i {
			t.Fatalf("agreeing ranks reordered: %d at %d", r.Chunk.Index, i)
		}
	}
	// Ranks swapped by the vectors tie: the lexical order stands.
	got = Fuse([]*docket.SearchHit{hit(0, 0, 1), hit(1, 1, 0)}, query)
	if got[0].Chunk.Index != 0 || got[0].Score != got[1].Score {
		t.Errorf("a tie of fused scores must keep lexical order: %d first, scores %v %v", got[0].Chunk.Index, got[0].Score, got[1].Score)
	}
}
