package storetest

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/docketq/docket"
)

func chunkChecks() []docCheck {
	return []docCheck{
		{"ReplaceList", checkChunkReplaceList},
		{"ReplaceAgain", checkChunkReplaceAgain},
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

func chunkScanChecks() []docCheck {
	return []docCheck{
		{"VectorsBitExact", checkChunkVectorsExact},
		{"FiltersModelAndDimensions", checkChunkScanFilter},
		{"StopsAtError", checkChunkScanStop},
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

// scan returns every chunk ChunkScan yields, sorted by document and index.
func (f *docFixture) scan(tenant string, p *docket.ChunkScanParams) []*docket.Chunk {
	f.t.Helper()
	var cs []*docket.Chunk
	f.read(tenant, func(tx docket.Tx) error {
		return tx.ChunkScan(f.ctx, p, func(c *docket.Chunk) error {
			cs = append(cs, c)
			return nil
		})
	})
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].DocumentID != cs[j].DocumentID {
			return cs[i].DocumentID < cs[j].DocumentID
		}
		return cs[i].Index < cs[j].Index
	})
	return cs
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
	if n := len(f.scan(tn.ID, &docket.ChunkScanParams{Model: "m", Dimensions: 3})); n != 0 {
		f.t.Fatalf("ChunkScan finds %d chunks of the replaced set", n)
	}
	f.replaceChunks(tn.ID, doc.ID, nil)
	if got := f.chunks(tn.ID, doc.ID); len(got) != 0 {
		f.t.Fatalf("ChunkList after replacing with none: %d chunks", len(got))
	}
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

func checkChunkVectorsExact(f *docFixture) {
	tn := f.tenant("a")
	doc := f.insertDoc(tn.ID, "a.txt")
	v := awkwardVector()
	want := []*docket.Chunk{{Index: 0, Text: "awkward", PageStart: 1, PageEnd: 1, Vector: v, Model: "m", Dimensions: len(v)}}
	f.replaceChunks(tn.ID, doc.ID, want)
	got := f.scan(tn.ID, &docket.ChunkScanParams{Model: "m", Dimensions: len(v)})
	if len(got) != 1 {
		f.t.Fatalf("ChunkScan: %d chunks, want 1", len(got))
	}
	f.wantChunk("ChunkScan", got[0], want[0], tn.ID, doc.ID)
	if len(got[0].Vector) != len(v) {
		f.t.Fatalf("vector of %d values, want %d", len(got[0].Vector), len(v))
	}
	for i, x := range got[0].Vector {
		if math.Float32bits(x) != math.Float32bits(v[i]) {
			f.t.Fatalf("vector[%d] = %g (bits %#x), want %g (bits %#x)", i, x, math.Float32bits(x), v[i], math.Float32bits(v[i]))
		}
	}
}

func checkChunkScanFilter(f *docFixture) {
	tn := f.tenant("a")
	d1, d2 := f.insertDoc(tn.ID, "1.txt"), f.insertDoc(tn.ID, "2.txt")
	f.replaceChunks(tn.ID, d1.ID, sampleChunks("m", 3, 2))
	f.replaceChunks(tn.ID, d2.ID, append(sampleChunks("m", 3, 1), sampleChunks("m", 4, 2)[1]))
	other := f.insertDoc(tn.ID, "3.txt")
	f.replaceChunks(tn.ID, other.ID, sampleChunks("other", 3, 2))
	for _, c := range []struct {
		model string
		dims  int
		want  []string // "doc/index"
	}{
		{"m", 3, []string{d1.ID + "/0", d1.ID + "/1", d2.ID + "/0"}},
		{"m", 4, []string{d2.ID + "/1"}},
		{"other", 3, []string{other.ID + "/0", other.ID + "/1"}},
		{"other", 4, nil},
		{"none", 3, nil},
	} {
		var got []string
		for _, ch := range f.scan(tn.ID, &docket.ChunkScanParams{Model: c.model, Dimensions: c.dims}) {
			if ch.Model != c.model || ch.Dimensions != c.dims || len(ch.Vector) != c.dims {
				f.t.Fatalf("ChunkScan(%s, %d) yielded a chunk of %s with %d (vector %d)", c.model, c.dims, ch.Model, ch.Dimensions, len(ch.Vector))
			}
			got = append(got, fmt.Sprintf("%s/%d", ch.DocumentID, ch.Index))
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			f.t.Fatalf("ChunkScan(%s, %d) = %v, want %v", c.model, c.dims, got, c.want)
		}
	}
}

func checkChunkScanStop(f *docFixture) {
	tn := f.tenant("a")
	doc := f.insertDoc(tn.ID, "a.txt")
	f.replaceChunks(tn.ID, doc.ID, sampleChunks("m", 3, 5))
	stop := errors.New("stop")
	calls := 0
	err := f.s.ReadTenant(f.ctx, tn.ID, func(tx docket.Tx) error {
		return tx.ChunkScan(f.ctx, &docket.ChunkScanParams{Model: "m", Dimensions: 3}, func(*docket.Chunk) error {
			calls++
			return stop
		})
	})
	dWantErr(f.t, "ChunkScan with fn failing", err, stop)
	if calls != 1 {
		f.t.Fatalf("ChunkScan called fn %d times after it failed, want once", calls)
	}
}
