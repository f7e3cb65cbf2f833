package storetest

import (
	"bytes"
	"time"

	"github.com/docketq/docket"
)

func idempotencyChecks() []docCheck {
	return []docCheck{
		{"InsertGet", checkIdemInsertGet},
		{"Duplicate", checkIdemDuplicate},
		{"GetUnknown", func(f *docFixture) {
			tn := f.tenant("a")
			dWantErr(f.t, "IdempotencyGet(unknown)", f.idemGetErr(tn.ID, "nokey"), docket.ErrNotFound)
		}},
	}
}

// newIdem returns a record of key for a new document of tenant.
func (f *docFixture) newIdem(tenant, key, body string) *docket.IdempotencyRecord {
	f.t.Helper()
	doc := f.insertDoc(tenant, key+".txt")
	return &docket.IdempotencyRecord{
		Key: key, RequestHash: "a3f1c2", StatusCode: 202,
		Body: []byte(body), DocumentID: doc.ID, CreatedAt: time.Now(),
	}
}

func (f *docFixture) insertIdem(tenant string, rec *docket.IdempotencyRecord) {
	f.t.Helper()
	f.write(tenant, func(tx docket.Tx) error { return tx.IdempotencyInsert(f.ctx, rec) })
}

func (f *docFixture) getIdem(tenant, key string) *docket.IdempotencyRecord {
	f.t.Helper()
	var rec *docket.IdempotencyRecord
	f.read(tenant, func(tx docket.Tx) (err error) {
		rec, err = tx.IdempotencyGet(f.ctx, key)
		return err
	})
	return rec
}

func (f *docFixture) idemGetErr(tenant, key string) error {
	return f.s.ReadTenant(f.ctx, tenant, func(tx docket.Tx) error {
		_, err := tx.IdempotencyGet(f.ctx, key)
		return err
	})
}

// wantIdem fails the check unless got is want as stored.
func (f *docFixture) wantIdem(what string, got, want *docket.IdempotencyRecord) {
	f.t.Helper()
	if got.Key != want.Key || got.RequestHash != want.RequestHash || got.StatusCode != want.StatusCode ||
		!bytes.Equal(got.Body, want.Body) || got.DocumentID != want.DocumentID {
		f.t.Fatalf("%s = %+v, want %+v", what, got, want)
	}
	dNear(f.t, what+" CreatedAt", got.CreatedAt, want.CreatedAt)
}

func checkIdemInsertGet(f *docFixture) {
	tn := f.tenant("a")
	want := f.newIdem(tn.ID, "key-1", `{"document":{"id":"x"},"job":{"id":"1"}}`)
	f.insertIdem(tn.ID, want)
	f.wantIdem("IdempotencyGet", f.getIdem(tn.ID, "key-1"), want)
	dWantErr(f.t, "IdempotencyGet(another key)", f.idemGetErr(tn.ID, "key-2"), docket.ErrNotFound)
}

func checkIdemDuplicate(f *docFixture) {
	tn := f.tenant("a")
	first := f.newIdem(tn.ID, "key-1", `{"first":true}`)
	f.insertIdem(tn.ID, first)
	again := f.newIdem(tn.ID, "key-1", `{"first":false}`)
	err := f.s.InTenant(f.ctx, tn.ID, func(tx docket.Tx) error { return tx.IdempotencyInsert(f.ctx, again) })
	dWantErr(f.t, "IdempotencyInsert(recorded key)", err, docket.ErrDuplicate)
	f.wantIdem("IdempotencyGet after a refused duplicate", f.getIdem(tn.ID, "key-1"), first)
}
