package storetest

import (
	"fmt"
	"math"
	"slices"

	"github.com/docketq/docket"
)

func chunkSearchChecks() []docCheck {
	return []docCheck{
		{"VectorsBitExact", checkSearchVectorsExact},
		{"Phrases", checkSearchPhrases},
		{"BestFirst", checkSearchRanked},
		{"LimitAndTies", checkSearchLimit},
		{"Ranked", checkSearchRankedCap},
		{"Model", checkSearchModel},
		{"Document", checkSearchDocument},
		{"Stems", checkSearchStems},
		{"DeletedDocument", checkSearchDeleted},
		{"WordsAsWritten", checkSearchAsWritten},
	}
}

// textChunks returns a chunk of model "m" (2 dimensions) for each text.
func textChunks(language string, texts ...string) []*docket.Chunk {
	out := make([]*docket.Chunk, len(texts))
	for i, text := range texts {
		out[i] = &docket.Chunk{Index: i, Text: text, PageStart: i + 1, PageEnd: i + 1,
			Vector: []float32{float32(i + 1), 1}, Model: "m", Dimensions: 2, Language: language}
	}
	return out
}

// checkSearchVectorsExact: a hit carries its chunk whole, the document's
// filename and the vector bit for bit.
func checkSearchVectorsExact(f *docFixture) {
	tn := f.tenant("a")
	doc := f.insertDoc(tn.ID, "awkward.pdf")
	v := awkwardVector()
	want := []*docket.Chunk{{Index: 0, Text: "awkward", PageStart: 2, PageEnd: 3, Vector: v, Model: "m", Dimensions: len(v)}}
	f.replaceChunks(tn.ID, doc.ID, want)
	got := f.search(tn.ID, &docket.ChunkSearchParams{Phrases: []string{"awkward"}, Model: "m", Dimensions: len(v), Limit: 10})
	if len(got) != 1 {
		f.t.Fatalf("ChunkSearch: %d hits, want 1", len(got))
	}
	f.wantChunk("ChunkSearch", got[0].Chunk, want[0], tn.ID, doc.ID)
	if got[0].Filename != "awkward.pdf" {
		f.t.Fatalf("hit's Filename %q, want awkward.pdf", got[0].Filename)
	}
	if len(got[0].Chunk.Vector) != len(v) {
		f.t.Fatalf("vector of %d values, want %d", len(got[0].Chunk.Vector), len(v))
	}
	for i, x := range got[0].Chunk.Vector {
		if math.Float32bits(x) != math.Float32bits(v[i]) {
			f.t.Fatalf("vector[%d] = %g (bits %#x), want %g (bits %#x)", i, x, math.Float32bits(x), v[i], math.Float32bits(v[i]))
		}
	}
}

// checkSearchPhrases: every phrase must be in a chunk (or any, with Any),
// its words in order, in any case; words in no chunk find nothing; text
// that is no word is no error.
func checkSearchPhrases(f *docFixture) {
	tn := f.tenant("a")
	doc := f.insertDoc(tn.ID, "a.txt")
	f.replaceChunks(tn.ID, doc.ID, textChunks("",
		"The whip-poor-will sang at dusk over Walden pond.",
		"A will to live; the poor whip.",
		"CUDA kernels run on the GPU.",
		"Nothing else here."))
	at := func(i ...int) []string {
		out := []string{}
		for _, n := range i {
			out = append(out, fmt.Sprintf("%s/%d", doc.ID, n))
		}
		return out
	}
	for _, tc := range []struct {
		phrases []string
		anyOf   bool
		want    []string
	}{
		{[]string{"whip-poor-will"}, false, at(0)},
		{[]string{"whip poor will"}, false, at(0)},
		{[]string{"CUDA"}, false, at(2)},
		{[]string{"cuda", "Kernels"}, false, at(2)},
		{[]string{"cuda", "walden"}, false, at()},
		{[]string{"cuda", "walden"}, true, at(0, 2)},
		{[]string{"xyzzyplugh"}, false, at()},
		{[]string{"--", "?"}, false, at()},
		{nil, false, at()},
		{[]string{`cuda" OR "walden`}, false, at()},
		{[]string{`NEAR(cuda`, "walden*"}, true, at(0)}, // query syntax is text: "near cuda" is nowhere
	} {
		hits := f.search(tn.ID, &docket.ChunkSearchParams{Phrases: tc.phrases, Any: tc.anyOf, Limit: 10})
		got := found(hits)
		if len(got) == 0 {
			got = at()
		}
		slices.Sort(got)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			f.t.Errorf("ChunkSearch(%q, Any %t) = %v, want %v", tc.phrases, tc.anyOf, got, tc.want)
		}
	}
}

// checkSearchRanked: a chunk about the words ranks before one that
// mentions them once among many others.
func checkSearchRanked(f *docFixture) {
	tn := f.tenant("a")
	doc := f.insertDoc(tn.ID, "a.txt")
	f.replaceChunks(tn.ID, doc.ID, textChunks("",
		"Once, among the many other things this long sentence is about, a lighthouse stood somewhere on a coast far away.",
		"Lighthouse keeper. The lighthouse keeper kept the lighthouse."))
	hits := f.search(tn.ID, &docket.ChunkSearchParams{Phrases: []string{"lighthouse"}, Limit: 10})
	if len(hits) != 2 || hits[0].Chunk.Index != 1 || !(hits[0].Rank > hits[1].Rank) {
		f.t.Fatalf("ChunkSearch(lighthouse) = %v, ranks %v; want chunk 1 first with a higher rank", found(hits), ranks(hits))
	}
}

// checkSearchLimit: Limit caps the hits; equal ranks come in document and
// index order.
func checkSearchLimit(f *docFixture) {
	tn := f.tenant("a")
	d1, d2 := f.insertDoc(tn.ID, "1.txt"), f.insertDoc(tn.ID, "2.txt")
	f.replaceChunks(tn.ID, d2.ID, textChunks("", "same words", "same words"))
	f.replaceChunks(tn.ID, d1.ID, textChunks("", "same words", "same words"))
	first, second := d1.ID, d2.ID
	if second < first {
		first, second = second, first
	}
	want := []string{first + "/0", first + "/1", second + "/0"}
	if got := found(f.search(tn.ID, &docket.ChunkSearchParams{Phrases: []string{"same"}, Limit: 3})); fmt.Sprint(got) != fmt.Sprint(want) {
		f.t.Fatalf("ChunkSearch(same, Limit 3) = %v, want %v", got, want)
	}
}

// checkSearchModel: hits of the model and size asked for carry their
// vectors; others are found without one.
func checkSearchModel(f *docFixture) {
	tn := f.tenant("a")
	doc := f.insertDoc(tn.ID, "a.txt")
	cs := textChunks("", "apple one", "apple two", "apple three")
	cs[1].Model = "n"
	cs[2].Vector, cs[2].Dimensions = []float32{1, 2, 3}, 3
	f.replaceChunks(tn.ID, doc.ID, cs)
	hits := f.search(tn.ID, &docket.ChunkSearchParams{Phrases: []string{"apple"}, Model: "m", Dimensions: 2, Limit: 10})
	if len(hits) != 3 {
		f.t.Fatalf("ChunkSearch(apple) = %v, want all 3 chunks", found(hits))
	}
	for _, h := range hits {
		wantVec := h.Chunk.Index == 0
		if (len(h.Chunk.Vector) == 2) != wantVec || !wantVec && h.Chunk.Vector != nil {
			f.t.Errorf("chunk %d (model %s, %d dimensions) has vector %v", h.Chunk.Index, h.Chunk.Model, h.Chunk.Dimensions, h.Chunk.Vector)
		}
	}
}

// checkSearchDocument: DocumentID keeps that document's chunks.
func checkSearchDocument(f *docFixture) {
	tn := f.tenant("a")
	d1, d2 := f.insertDoc(tn.ID, "1.txt"), f.insertDoc(tn.ID, "2.txt")
	f.replaceChunks(tn.ID, d1.ID, textChunks("", "harbour survey"))
	f.replaceChunks(tn.ID, d2.ID, textChunks("", "harbour survey", "harbour master"))
	got := found(f.search(tn.ID, &docket.ChunkSearchParams{Phrases: []string{"harbour"}, DocumentID: d2.ID, Limit: 10}))
	slices.Sort(got)
	if want := []string{d2.ID + "/0", d2.ID + "/1"}; fmt.Sprint(got) != fmt.Sprint(want) {
		f.t.Fatalf("ChunkSearch(harbour, document 2) = %v, want %v", got, want)
	}
	if got := f.search(tn.ID, &docket.ChunkSearchParams{Phrases: []string{"harbour"}, DocumentID: f.uuid(), Limit: 10}); len(got) != 0 {
		f.t.Fatalf("ChunkSearch(harbour, an unknown document) = %v", found(got))
	}
}

// checkSearchStems: the words of an English chunk are found by their
// stems ("payment" finds "payments").
func checkSearchStems(f *docFixture) {
	tn := f.tenant("a")
	doc := f.insertDoc(tn.ID, "a.txt")
	f.replaceChunks(tn.ID, doc.ID, textChunks("en", "All payments were received in March.", "Nothing else."))
	for _, q := range []string{"payment", "payments", "PAYMENTS were received"} {
		if got := found(f.search(tn.ID, &docket.ChunkSearchParams{Phrases: []string{q}, Limit: 10})); len(got) != 1 || got[0] != doc.ID+"/0" {
			f.t.Errorf("ChunkSearch(%q) = %v, want %s/0", q, got, doc.ID)
		}
	}
}

// checkSearchDeleted: a deleted document's chunks are found no more.
func checkSearchDeleted(f *docFixture) {
	tn := f.tenant("a")
	gone, kept := f.insertDoc(tn.ID, "gone.txt"), f.insertDoc(tn.ID, "kept.txt")
	f.replaceChunks(tn.ID, gone.ID, textChunks("", "quarterly revenue"))
	f.replaceChunks(tn.ID, kept.ID, textChunks("", "quarterly revenue"))
	f.write(tn.ID, func(tx docket.Tx) error {
		_, err := tx.DocumentDelete(f.ctx, gone.ID)
		return err
	})
	if got := found(f.search(tn.ID, &docket.ChunkSearchParams{Phrases: []string{"revenue"}, Limit: 10})); len(got) != 1 || got[0] != kept.ID+"/0" {
		f.t.Fatalf("ChunkSearch(revenue) after a delete = %v, want only %s/0", got, kept.ID)
	}
}

func ranks(hits []*docket.SearchHit) []float64 {
	out := make([]float64, len(hits))
	for i, h := range hits {
		out[i] = h.Rank
	}
	return out
}

// checkSearchAsWritten: a word is found as written whatever surrounds it
// (typographic quotes, a PDF's private-use bracket glyph) and even where
// the document's language counts it a function word; case folds.
func checkSearchAsWritten(f *docFixture) {
	tn := f.tenant("a")
	doc := f.insertDoc(tn.ID, "a.txt")
	f.replaceChunks(tn.ID, doc.ID, textChunks("de",
		"Siehe „Kruskal“ oder Prim.",
		"Beweis: \uf8ed x1x2 \uf8edy1y2",
		"Daraus folgt in diesem Fall die Übungen."))
	for _, tc := range []struct {
		q    string
		want int
	}{{"Kruskal", 0}, {"kruskal", 0}, {"x1x2", 1}, {"y1y2", 1}, {"diesem", 2}, {"übungen", 2}} {
		if got := found(f.search(tn.ID, &docket.ChunkSearchParams{Phrases: []string{tc.q}, Limit: 10})); len(got) != 1 ||
			got[0] != fmt.Sprintf("%s/%d", doc.ID, tc.want) {
			f.t.Errorf("ChunkSearch(%q) = %v, want %s/%d", tc.q, got, doc.ID, tc.want)
		}
	}
}

// checkSearchRankedCap: Ranked caps the matches ranked, and so the hits.
func checkSearchRankedCap(f *docFixture) {
	tn := f.tenant("a")
	doc := f.insertDoc(tn.ID, "a.txt")
	f.replaceChunks(tn.ID, doc.ID, textChunks("", "tide one", "tide two", "tide three", "tide four", "tide five"))
	for _, tc := range []struct{ ranked, want int }{{0, 5}, {2, 2}, {5, 5}, {9, 5}} {
		if got := f.search(tn.ID, &docket.ChunkSearchParams{Phrases: []string{"tide"}, Limit: 10, Ranked: tc.ranked}); len(got) != tc.want {
			f.t.Errorf("ChunkSearch(tide, Ranked %d) = %v, want %d hits", tc.ranked, found(got), tc.want)
		}
	}
}
