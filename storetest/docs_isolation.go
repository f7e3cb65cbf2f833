package storetest

import (
	"time"

	"github.com/docketq/docket"
)

// Every Tx method of tenant A against tenant B's objects: B's objects are
// not found, not listed, not changed.
func isolationChecks() []docCheck {
	return []docCheck{
		{"DocumentGet", checkIsoDocGet},
		{"DocumentList", checkIsoDocList},
		{"DocumentInsert", checkIsoDocInsert},
		{"DocumentUpdate", checkIsoDocUpdate},
		{"DocumentDelete", checkIsoDocDelete},
		{"ChunkReplace", checkIsoChunkReplace},
		{"ChunkDeleteIndexes", checkIsoChunkDeleteIndexes},
		{"ChunkList", checkIsoChunkList},
		{"ChunkSearch", checkIsoChunkSearch},
		{"RateLimit", checkIsoRateLimit},
		{"Idempotency", checkIsoIdempotency},
	}
}

// twoTenants is tenants A and B, each with a document of two chunks of
// model "m" (3 dimensions).
type twoTenants struct {
	a, b       string
	aDoc, bDoc *docket.Document
}

func (f *docFixture) twoTenants() *twoTenants {
	f.t.Helper()
	tt := &twoTenants{a: f.tenant("a").ID, b: f.tenant("b").ID}
	tt.aDoc = f.insertDoc(tt.a, "a.txt")
	tt.bDoc = f.insertDoc(tt.b, "b.txt")
	f.replaceChunks(tt.a, tt.aDoc.ID, sampleChunks("m", 3, 2))
	f.replaceChunks(tt.b, tt.bDoc.ID, sampleChunks("m", 3, 2))
	return tt
}

// wantBIntact fails the check unless B's document and chunks are as
// twoTenants made them.
func (f *docFixture) wantBIntact(tt *twoTenants) {
	f.t.Helper()
	got := f.getDoc(tt.b, tt.bDoc.ID)
	if got.TenantID != tt.b || got.Filename != tt.bDoc.Filename || got.Fields != nil || len(got.Warnings) != 0 {
		f.t.Fatalf("tenant B's document changed from A's transaction: %+v", got)
	}
	want := sampleChunks("m", 3, 2)
	cs := f.chunks(tt.b, tt.bDoc.ID)
	if len(cs) != len(want) {
		f.t.Fatalf("tenant B's document has %d chunks after A's transaction, want %d", len(cs), len(want))
	}
	for i, c := range cs {
		f.wantChunk("B's chunk", c, want[i], tt.b, tt.bDoc.ID)
	}
}

func checkIsoDocGet(f *docFixture) {
	tt := f.twoTenants()
	dWantErr(f.t, "DocumentGet(B's document) in A", f.getDocErr(tt.a, tt.bDoc.ID), docket.ErrNotFound)
	err := f.s.InTenant(f.ctx, tt.a, func(tx docket.Tx) error {
		_, err := tx.DocumentGet(f.ctx, tt.bDoc.ID)
		return err
	})
	dWantErr(f.t, "DocumentGet(B's document) in A's InTenant", err, docket.ErrNotFound)
}

func checkIsoDocList(f *docFixture) {
	tt := f.twoTenants()
	f.wantDocIDs("DocumentList in A", f.listDocs(tt.a, &docket.DocumentListParams{}), tt.aDoc.ID)
	f.wantDocIDs("DocumentList(pending) in A", f.listDocs(tt.a, &docket.DocumentListParams{Status: docket.StatusPending}), tt.aDoc.ID)
	f.wantDocIDs("DocumentList in B", f.listDocs(tt.b, &docket.DocumentListParams{}), tt.bDoc.ID)
}

func checkIsoDocInsert(f *docFixture) {
	tt := f.twoTenants()
	doc := f.newDoc("claims-b.txt")
	doc.TenantID = tt.b
	f.write(tt.a, func(tx docket.Tx) error { return tx.DocumentInsert(f.ctx, doc) })
	if got := f.getDoc(tt.a, doc.ID); got.TenantID != tt.a {
		f.t.Fatalf("document inserted in A with TenantID B is stored with tenant %s", got.TenantID)
	}
	dWantErr(f.t, "DocumentGet in B of a document A inserted", f.getDocErr(tt.b, doc.ID), docket.ErrNotFound)
	f.wantDocIDs("DocumentList in B", f.listDocs(tt.b, &docket.DocumentListParams{}), tt.bDoc.ID)
}

func checkIsoDocUpdate(f *docFixture) {
	tt := f.twoTenants()
	status := docket.StatusFailed
	jobID := int64(77)
	err := f.s.InTenant(f.ctx, tt.a, func(tx docket.Tx) error {
		_, err := tx.DocumentUpdate(f.ctx, &docket.DocumentUpdateParams{
			ID: tt.bDoc.ID, JobID: &jobID, Status: &status, Fields: sampleFields(), Warnings: []string{"from A"},
		})
		return err
	})
	dWantErr(f.t, "DocumentUpdate(B's document) in A", err, docket.ErrNotFound)
	f.wantBIntact(tt)
	if got := f.getDoc(tt.b, tt.bDoc.ID); got.Status != docket.StatusPending || got.JobID != 0 {
		f.t.Fatalf("B's document after A's update: Status %s, JobID %d", got.Status, got.JobID)
	}
}

func checkIsoDocDelete(f *docFixture) {
	tt := f.twoTenants()
	dWantErr(f.t, "DocumentDelete(B's document) in A", f.deleteDocErr(tt.a, tt.bDoc.ID), docket.ErrNotFound)
	f.wantBIntact(tt)
}

func checkIsoChunkReplace(f *docFixture) {
	tt := f.twoTenants()
	err := f.s.InTenant(f.ctx, tt.a, func(tx docket.Tx) error {
		return tx.ChunkReplace(f.ctx, tt.bDoc.ID, sampleChunks("evil", 3, 1))
	})
	dWantErr(f.t, "ChunkReplace(B's document) in A", err, docket.ErrNotFound)
	f.wantBIntact(tt)
	if hits := f.search(tt.a, &docket.ChunkSearchParams{Phrases: []string{"evil"}, Limit: 10}); len(hits) != 0 {
		f.t.Fatalf("A's refused ChunkReplace left %v in A", found(hits))
	}
}

func checkIsoChunkDeleteIndexes(f *docFixture) {
	tt := f.twoTenants()
	err := f.s.InTenant(f.ctx, tt.a, func(tx docket.Tx) error {
		return tx.ChunkDeleteIndexes(f.ctx, tt.bDoc.ID, 0, 100)
	})
	dWantErr(f.t, "ChunkDeleteIndexes(B's document) in A", err, docket.ErrNotFound)
	f.wantBIntact(tt)
}

func checkIsoChunkList(f *docFixture) {
	tt := f.twoTenants()
	dWantErr(f.t, "ChunkList(B's document) in A", f.chunkListErr(tt.a, tt.bDoc.ID), docket.ErrNotFound)
}

func checkIsoChunkSearch(f *docFixture) {
	tt := f.twoTenants()
	for _, tn := range []struct{ id, doc string }{{tt.a, tt.aDoc.ID}, {tt.b, tt.bDoc.ID}} {
		hits := f.search(tn.id, &docket.ChunkSearchParams{Phrases: []string{"chunk"}, Model: "m", Dimensions: 3, Limit: 10})
		if len(hits) != 2 {
			f.t.Fatalf("ChunkSearch in %s: %v, want its own 2 chunks", tn.id, found(hits))
		}
		for _, h := range hits {
			if h.Chunk.TenantID != tn.id || h.Chunk.DocumentID != tn.doc {
				f.t.Fatalf("ChunkSearch in %s found a chunk of tenant %s, document %s", tn.id, h.Chunk.TenantID, h.Chunk.DocumentID)
			}
		}
	}
}

func checkIsoRateLimit(f *docFixture) {
	tt := f.twoTenants()
	p := &docket.RateLimitParams{Limit: 2, Window: time.Hour}
	f.take(tt.b, p)
	f.take(tt.a, p)
	f.take(tt.a, p)
	f.wantWindow("take in A's full window", f.take(tt.a, p), p, false, 0)
	f.wantWindow("peek in B", f.peek(tt.b, p), p, false, 1)
	f.wantWindow("take in B", f.take(tt.b, p), p, true, 0)
}

func checkIsoIdempotency(f *docFixture) {
	tt := f.twoTenants()
	ra := f.newIdem(tt.a, "shared", `{"tenant":"a"}`)
	rb := f.newIdem(tt.b, "shared", `{"tenant":"b"}`)
	f.insertIdem(tt.a, ra)
	f.insertIdem(tt.b, rb)
	f.wantIdem("IdempotencyGet in A", f.getIdem(tt.a, "shared"), ra)
	f.wantIdem("IdempotencyGet in B", f.getIdem(tt.b, "shared"), rb)
	f.insertIdem(tt.b, f.newIdem(tt.b, "only-b", `{}`))
	dWantErr(f.t, "IdempotencyGet(B's key) in A", f.idemGetErr(tt.a, "only-b"), docket.ErrNotFound)
}
