package storetest

import (
	"fmt"
	"math"

	"github.com/docketq/docket"
)

func chunkChecks() []docCheck {
	return []docCheck{
		{"ReplaceList", checkChunkReplaceList},
		{"ReplaceAgain", checkChunkReplaceAgain},
		{"Append", checkChunkAppend},
		{"DeleteIndexes", checkChunkDeleteIndexes},
		{"UnknownDocument", checkChunkUnknownDoc},
		{"ListPage", checkChunkListPage},
	}
}

// checkChunkListPage: From and Limit select a page in index order; a page
// past the last chunk is empty, not ErrNotFound.
func checkChunkListPage(f *docFixture) {
	tn := f.tenant("a")
	doc := f.insertDoc(tn.ID, "a.txt")
	f.replaceChunks(tn.ID, doc.ID, sampleChunks("m", 3, 5))
	for _, tc := range []struct {
		from, limit int
		want        []int
	}{{0, 2, []int{0, 1}}, {2, 2, []int{2, 3}}, {4, 2, []int{4}}, {5, 2, nil}, {1, 0, []int{1, 2, 3, 4}}} {
		var cs []*docket.Chunk
		f.read(tn.ID, func(tx docket.Tx) (err error) {
			cs, err = tx.ChunkList(f.ctx, &docket.ChunkListParams{DocumentID: doc.ID, From: tc.from, Limit: tc.limit})
			return err
		})
		var got []int
		for _, c := range cs {
			got = append(got, c.Index)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			f.t.Errorf("ChunkList(From %d, Limit %d): indexes %v, want %v", tc.from, tc.limit, got, tc.want)
		}
	}
}

// sampleChunks returns n chunks with vectors of model and dims, chunk i
// on pages i+1..i+2.
func sampleChunks(model string, dims, n int) []*docket.Chunk {
	out := make([]*docket.Chunk, n)
	for i := range out {
		v := make([]float32, dims)
		for j := range v {
			v[j] = float32(i+1) / float32(j+3)
		}
		out[i] = &docket.Chunk{
			Index: i, Text: fmt.Sprintf("chunk %d of %s", i, model), PageStart: i + 1, PageEnd: i + 2,
			Vector: v, Model: model, Dimensions: dims,
		}
	}
	return out
}

func (f *docFixture) replaceChunks(tenant, docID string, chunks []*docket.Chunk) {
	f.t.Helper()
	f.write(tenant, func(tx docket.Tx) error { return tx.ChunkReplace(f.ctx, docID, chunks) })
}

func (f *docFixture) chunks(tenant, docID string) []*docket.Chunk {
	f.t.Helper()
	var cs []*docket.Chunk
	f.read(tenant, func(tx docket.Tx) (err error) {
		cs, err = tx.ChunkList(f.ctx, &docket.ChunkListParams{DocumentID: docID})
		return err
	})
	return cs
}

func (f *docFixture) chunkListErr(tenant, docID string) error {
	return f.s.ReadTenant(f.ctx, tenant, func(tx docket.Tx) error {
		_, err := tx.ChunkList(f.ctx, &docket.ChunkListParams{DocumentID: docID})
		return err
	})
}

// search returns the hits of ChunkSearch.
func (f *docFixture) search(tenant string, p *docket.ChunkSearchParams) []*docket.SearchHit {
	f.t.Helper()
	var hits []*docket.SearchHit
	f.read(tenant, func(tx docket.Tx) (err error) {
		hits, err = tx.ChunkSearch(f.ctx, p)
		return err
	})
	return hits
}

// found returns "document/index" of each hit, in order.
func found(hits []*docket.SearchHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = fmt.Sprintf("%s/%d", h.Chunk.DocumentID, h.Chunk.Index)
	}
	return out
}

// wantChunk fails the check unless got is want of document doc and tenant.
func (f *docFixture) wantChunk(what string, got, want *docket.Chunk, tenant, doc string) {
	f.t.Helper()
	if got.TenantID != tenant || got.DocumentID != doc || got.Index != want.Index || got.Text != want.Text ||
		got.PageStart != want.PageStart || got.PageEnd != want.PageEnd || got.Model != want.Model ||
		got.Dimensions != want.Dimensions {
		f.t.Fatalf("%s = %+v, want %+v of tenant %s, document %s", what, got, want, tenant, doc)
	}
}

func checkChunkReplaceList(f *docFixture) {
	tn := f.tenant("a")
	doc := f.insertDoc(tn.ID, "a.txt")
	want := sampleChunks("m", 3, 4)
	for _, c := range want {
		c.TenantID, c.DocumentID = "t_someone_else", "another-document" // set by the store
	}
	shuffled := []*docket.Chunk{want[2], want[0], want[3], want[1]}
	f.replaceChunks(tn.ID, doc.ID, shuffled)
	got := f.chunks(tn.ID, doc.ID)
	if len(got) != len(want) {
		f.t.Fatalf("ChunkList: %d chunks, want %d", len(got), len(want))
	}
	for i, c := range got {
		f.wantChunk(fmt.Sprintf("ChunkList[%d]", i), c, want[i], tn.ID, doc.ID)
		if len(c.Vector) != 0 {
			f.t.Fatalf("ChunkList[%d] has a vector of %d; ChunkList returns chunks without vectors", i, len(c.Vector))
		}
	}
}

func checkChunkReplaceAgain(f *docFixture) {
	tn := f.tenant("a")
	doc := f.insertDoc(tn.ID, "a.txt")
	f.replaceChunks(tn.ID, doc.ID, sampleChunks("m", 3, 4))
	next := sampleChunks("m2", 2, 2)
	next[1].Text = "replaced"
	f.replaceChunks(tn.ID, doc.ID, next)
	got := f.chunks(tn.ID, doc.ID)
	if len(got) != 2 {
		f.t.Fatalf("ChunkList after a second replace: %d chunks, want 2", len(got))
	}
	for i, c := range got {
		f.wantChunk(fmt.Sprintf("ChunkList[%d]", i), c, next[i], tn.ID, doc.ID)
	}
	if hits := f.search(tn.ID, &docket.ChunkSearchParams{Phrases: []string{"of m"}, Limit: 10}); len(hits) != 0 {
		f.t.Fatalf("ChunkSearch finds %v of the replaced set", found(hits))
	}
	f.replaceChunks(tn.ID, doc.ID, nil)
	if got := f.chunks(tn.ID, doc.ID); len(got) != 0 {
		f.t.Fatalf("ChunkList after replacing with none: %d chunks", len(got))
	}
}

// checkChunkAppend: ChunkAppend adds to the chunks ChunkReplace wrote,
// refuses an index the document has, and a later ChunkReplace replaces
// them all.
func checkChunkAppend(f *docFixture) {
	tn := f.tenant("a")
	doc := f.insertDoc(tn.ID, "a.txt")
	all := sampleChunks("m", 3, 5)
	f.replaceChunks(tn.ID, doc.ID, all[:2])
	f.write(tn.ID, func(tx docket.Tx) error { return tx.ChunkAppend(f.ctx, doc.ID, all[2:4]) })
	f.write(tn.ID, func(tx docket.Tx) error { return tx.ChunkAppend(f.ctx, doc.ID, all[4:]) })
	got := f.chunks(tn.ID, doc.ID)
	if len(got) != len(all) {
		f.t.Fatalf("ChunkList after appends: %d chunks, want %d", len(got), len(all))
	}
	for i, c := range got {
		f.wantChunk(fmt.Sprintf("ChunkList[%d]", i), c, all[i], tn.ID, doc.ID)
	}
	if hits := f.search(tn.ID, &docket.ChunkSearchParams{Phrases: []string{"chunk 4 of m"}, Limit: 10}); len(hits) != 1 {
		f.t.Fatalf("ChunkSearch for an appended chunk: %v", found(hits))
	}
	err := f.s.InTenant(f.ctx, tn.ID, func(tx docket.Tx) error { return tx.ChunkAppend(f.ctx, doc.ID, all[1:2]) })
	dWantErr(f.t, "ChunkAppend(an index the document has)", err, docket.ErrDuplicate)
	f.replaceChunks(tn.ID, doc.ID, all[:1])
	if got := f.chunks(tn.ID, doc.ID); len(got) != 1 {
		f.t.Fatalf("ChunkList after a replace: %d chunks, want 1", len(got))
	}
	err = f.s.InTenant(f.ctx, tn.ID, func(tx docket.Tx) error { return tx.ChunkAppend(f.ctx, f.uuid(), all[:1]) })
	dWantErr(f.t, "ChunkAppend(unknown document)", err, docket.ErrNotFound)
}

// checkChunkDeleteIndexes: ChunkDeleteIndexes deletes the chunks in its
// index range and keeps the others, listed and searchable; new chunks can
// take the deleted indexes; an unknown document is ErrNotFound.
func checkChunkDeleteIndexes(f *docFixture) {
	tn := f.tenant("a")
	doc := f.insertDoc(tn.ID, "a.txt")
	all := sampleChunks("m", 3, 6)
	all[4].Index, all[5].Index = 1000, 1001 // a later part's own indexes
	f.replaceChunks(tn.ID, doc.ID, all)
	f.write(tn.ID, func(tx docket.Tx) error { return tx.ChunkDeleteIndexes(f.ctx, doc.ID, 1, 1000) })
	var got []int
	for _, c := range f.chunks(tn.ID, doc.ID) {
		got = append(got, c.Index)
	}
	if fmt.Sprint(got) != "[0 1000 1001]" {
		f.t.Fatalf("indexes after deleting [1, 1000): %v, want [0 1000 1001]", got)
	}
	if hits := f.search(tn.ID, &docket.ChunkSearchParams{Phrases: []string{"chunk 2 of m"}, Limit: 10}); len(hits) != 0 {
		f.t.Fatalf("ChunkSearch finds a deleted chunk: %v", found(hits))
	}
	if hits := f.search(tn.ID, &docket.ChunkSearchParams{Phrases: []string{"chunk 5 of m"}, Limit: 10}); len(hits) != 1 {
		f.t.Fatalf("ChunkSearch for a kept chunk: %v", found(hits))
	}
	f.write(tn.ID, func(tx docket.Tx) error { return tx.ChunkAppend(f.ctx, doc.ID, all[1:3]) })
	if n := len(f.chunks(tn.ID, doc.ID)); n != 5 {
		f.t.Fatalf("after appending to the deleted range: %d chunks, want 5", n)
	}
	f.write(tn.ID, func(tx docket.Tx) error { return tx.ChunkDeleteIndexes(f.ctx, doc.ID, 0, math.MaxInt) })
	if n := len(f.chunks(tn.ID, doc.ID)); n != 0 {
		f.t.Fatalf("after deleting [0, MaxInt): %d chunks", n)
	}
	err := f.s.InTenant(f.ctx, tn.ID, func(tx docket.Tx) error { return tx.ChunkDeleteIndexes(f.ctx, f.uuid(), 0, 10) })
	dWantErr(f.t, "ChunkDeleteIndexes(unknown document)", err, docket.ErrNotFound)
}

func checkChunkUnknownDoc(f *docFixture) {
	tn := f.tenant("a")
	id := f.uuid()
	err := f.s.InTenant(f.ctx, tn.ID, func(tx docket.Tx) error {
		return tx.ChunkReplace(f.ctx, id, sampleChunks("m", 3, 1))
	})
	dWantErr(f.t, "ChunkReplace(unknown document)", err, docket.ErrNotFound)
	dWantErr(f.t, "ChunkList(unknown document)", f.chunkListErr(tn.ID, id), docket.ErrNotFound)
}

// awkwardVector holds values a lossy encoding changes: negative zero,
// subnormals, the extremes, thirds.
func awkwardVector() []float32 {
	return []float32{
		float32(math.Copysign(0, -1)), 0, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
		math.MaxFloat32, -math.MaxFloat32, 1.0 / 3, -2.0 / 3, 1e-38, 123456.789, math.Nextafter32(1, 2),
	}
}
