package storetest

import (
	"reflect"
	"time"

	"github.com/docketq/docket"
)

func documentInsertChecks() []docCheck {
	return []docCheck{
		{"InsertGet", checkDocInsertGet},
		{"InsertDuplicate", checkDocInsertDuplicate},
		{"GetUnknown", func(f *docFixture) {
			tn := f.tenant("a")
			dWantErr(f.t, "DocumentGet(unknown)", f.getDocErr(tn.ID, f.uuid()), docket.ErrNotFound)
		}},
	}
}

func documentUpdateChecks() []docCheck {
	return []docCheck{
		{"Update", checkDocUpdate},
		{"UpdateUnknown", func(f *docFixture) {
			tn := f.tenant("a")
			err := f.s.InTenant(f.ctx, tn.ID, func(tx docket.Tx) error {
				_, err := tx.DocumentUpdate(f.ctx, &docket.DocumentUpdateParams{ID: f.uuid(), Warnings: []string{"w"}})
				return err
			})
			dWantErr(f.t, "DocumentUpdate(unknown)", err, docket.ErrNotFound)
		}},
	}
}

func documentDeleteChecks() []docCheck {
	return []docCheck{
		{"Delete", checkDocDelete},
		{"DeleteUnknown", func(f *docFixture) {
			tn := f.tenant("a")
			dWantErr(f.t, "DocumentDelete(unknown)", f.deleteDocErr(tn.ID, f.uuid()), docket.ErrNotFound)
		}},
	}
}

func checkDocInsertGet(f *docFixture) {
	tn := f.tenant("a")
	want := f.newDoc("report.txt")
	want.TenantID = "t_someone_else" // set from the transaction
	before := time.Now()
	f.write(tn.ID, func(tx docket.Tx) error { return tx.DocumentInsert(f.ctx, want) })
	got := f.getDoc(tn.ID, want.ID)
	if got.ID != want.ID || got.TenantID != tn.ID || got.Filename != want.Filename ||
		got.ContentType != want.ContentType || got.Size != want.Size || got.SHA256 != want.SHA256 ||
		got.BlobKey != want.BlobKey || got.JobID != 0 || got.Status != docket.StatusPending || got.Fields != nil {
		f.t.Fatalf("DocumentGet = %+v, want %+v with tenant %s and status pending", got, want, tn.ID)
	}
	dNear(f.t, "CreatedAt", got.CreatedAt, before)
	dNear(f.t, "UpdatedAt", got.UpdatedAt, before)
}

func checkDocInsertDuplicate(f *docFixture) {
	tn := f.tenant("a")
	doc := f.insertDoc(tn.ID, "first")
	again := f.newDoc("second")
	again.ID = doc.ID
	err := f.s.InTenant(f.ctx, tn.ID, func(tx docket.Tx) error { return tx.DocumentInsert(f.ctx, again) })
	dWantErr(f.t, "DocumentInsert(taken id)", err, docket.ErrDuplicate)
	if got := f.getDoc(tn.ID, doc.ID); got.Filename != "first" {
		f.t.Fatalf("document after a refused duplicate insert: filename %q, want first", got.Filename)
	}
}

// sampleFields are analysis results with every field set.
func sampleFields() *docket.Fields {
	return &docket.Fields{
		Title: "Quarterly report", Language: "en", PageCount: 12, WordCount: 3456,
		Dates:      []string{"2024-01-31", "2024-03-31"},
		Amounts:    []docket.Amount{{Value: "1234.56", Currency: "EUR"}, {Value: "7", Currency: "USD"}},
		KeyPhrases: []string{"revenue", "forecast"}, ChunkCount: 3,
		EmbeddingModel: "hash-v1", EmbeddingDimensions: 4, ActiveContent: true,
	}
}

func checkDocUpdate(f *docFixture) {
	tn := f.tenant("a")
	doc := f.insertDoc(tn.ID, "a.txt")
	status, fields := docket.StatusFailed, sampleFields()
	warnings := []string{"no text layer; OCR needed", "second"}
	got := f.updateDoc(tn.ID, &docket.DocumentUpdateParams{ID: doc.ID, Status: &status, Fields: fields, Warnings: warnings})
	for _, d := range []*docket.Document{got, f.getDoc(tn.ID, doc.ID)} {
		if d.Status != status || !reflect.DeepEqual(d.Fields, fields) || !reflect.DeepEqual(d.Warnings, warnings) {
			f.t.Fatalf("updated document: status %s, fields %+v, warnings %q; want %s, %+v, %q",
				d.Status, d.Fields, d.Warnings, status, fields, warnings)
		}
		if d.Filename != doc.Filename || d.BlobKey != doc.BlobKey || d.JobID != 0 || !d.CreatedAt.Equal(doc.CreatedAt) {
			f.t.Fatalf("update changed what it was not given: %+v, was %+v", d, doc)
		}
		if d.UpdatedAt.Before(doc.UpdatedAt) {
			f.t.Fatalf("UpdatedAt went back: %v, was %v", d.UpdatedAt, doc.UpdatedAt)
		}
	}
	jobID := int64(4242) // no such job: the recorded status stands
	got = f.updateDoc(tn.ID, &docket.DocumentUpdateParams{ID: doc.ID, JobID: &jobID})
	if got.JobID != jobID || got.Status != status || !reflect.DeepEqual(got.Fields, fields) || !reflect.DeepEqual(got.Warnings, warnings) {
		f.t.Fatalf("after updating only JobID: %+v; nil fields must stay as they were", got)
	}
}

func (f *docFixture) deleteDocErr(tenant, id string) error {
	return f.s.InTenant(f.ctx, tenant, func(tx docket.Tx) error {
		_, err := tx.DocumentDelete(f.ctx, id)
		return err
	})
}

func checkDocDelete(f *docFixture) {
	tn := f.tenant("a")
	doc := f.insertDoc(tn.ID, "gone.txt")
	keep := f.insertDoc(tn.ID, "kept.txt")
	fields := sampleFields()
	f.updateDoc(tn.ID, &docket.DocumentUpdateParams{ID: doc.ID, Fields: fields})
	f.replaceChunks(tn.ID, doc.ID, sampleChunks("m", 4, 3))
	f.replaceChunks(tn.ID, keep.ID, sampleChunks("m", 4, 2))
	var deleted *docket.Document
	f.write(tn.ID, func(tx docket.Tx) (err error) {
		deleted, err = tx.DocumentDelete(f.ctx, doc.ID)
		return err
	})
	if deleted == nil || deleted.ID != doc.ID || deleted.BlobKey != doc.BlobKey || deleted.TenantID != tn.ID ||
		!reflect.DeepEqual(deleted.Fields, fields) {
		f.t.Fatalf("DocumentDelete returned %+v, want the document as it was (blob key %s, fields)", deleted, doc.BlobKey)
	}
	dWantErr(f.t, "DocumentGet(deleted)", f.getDocErr(tn.ID, doc.ID), docket.ErrNotFound)
	dWantErr(f.t, "ChunkList(deleted)", f.chunkListErr(tn.ID, doc.ID), docket.ErrNotFound)
	dWantErr(f.t, "DocumentDelete(deleted)", f.deleteDocErr(tn.ID, doc.ID), docket.ErrNotFound)
	hits := f.search(tn.ID, &docket.ChunkSearchParams{Phrases: []string{"chunk"}, Limit: 10})
	if len(hits) != 2 {
		f.t.Fatalf("ChunkSearch after delete: %v, want the other document's 2 chunks", found(hits))
	}
	for _, h := range hits {
		if h.Chunk.DocumentID != keep.ID {
			f.t.Fatalf("ChunkSearch after delete found a chunk of %s: its chunks must go with it", h.Chunk.DocumentID)
		}
	}
	if n := len(f.chunks(tn.ID, keep.ID)); n != 2 {
		f.t.Fatalf("the other document has %d chunks after the delete, want 2", n)
	}
}
