package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue/driver"
)

// Names the document checks share.
const (
	docQueue = "documents"
	docKind  = "process_document"
)

// errBoom is the error a check's fn returns to make InTenant roll back.
var errBoom = errors.New("storetest: boom")

// docFixture is one fresh document store and the context of one check.
type docFixture struct {
	t   testing.TB
	ctx context.Context
	s   docket.Store
	d   driver.Driver
	x   driver.Executor
	seq *atomic.Int64
}

func newDocFixture(t testing.TB, s docket.Store, d driver.Driver) *docFixture {
	return &docFixture{t: t, ctx: t.Context(), s: s, d: d, x: d.Executor(), seq: new(atomic.Int64)}
}

// uuid returns a new document id: a well-formed UUID, increasing with each
// call, so that ids inserted later also sort later.
func (f *docFixture) uuid() string {
	return fmt.Sprintf("00000000-0000-4000-8000-%012x", f.seq.Add(1))
}

// tenant creates a tenant with id "t_"+name on the free plan.
func (f *docFixture) tenant(name string) *docket.Tenant {
	f.t.Helper()
	tn, err := f.s.TenantCreate(f.ctx, &docket.TenantCreateParams{
		ID: "t_" + name, Name: "Tenant " + name, Plan: docket.PlanFree,
	})
	if err != nil {
		f.t.Fatalf("TenantCreate(%s): %v", name, err)
	}
	return tn
}

// write runs fn in InTenant and fails the check unless it commits.
// Inside fn nothing fails the check: fn returns its errors.
func (f *docFixture) write(tenant string, fn func(tx docket.Tx) error) {
	f.t.Helper()
	if err := f.s.InTenant(f.ctx, tenant, fn); err != nil {
		f.t.Fatalf("InTenant(%s): %v", tenant, err)
	}
}

// read runs fn in ReadTenant and fails the check on an error.
func (f *docFixture) read(tenant string, fn func(tx docket.Tx) error) {
	f.t.Helper()
	if err := f.s.ReadTenant(f.ctx, tenant, fn); err != nil {
		f.t.Fatalf("ReadTenant(%s): %v", tenant, err)
	}
}

// newDoc returns a document to insert, with every column set.
func (f *docFixture) newDoc(name string) *docket.Document {
	id := f.uuid()
	return &docket.Document{
		ID: id, Filename: name, ContentType: "text/plain", Size: 1234,
		SHA256:  "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		BlobKey: "blob/" + id, Status: docket.StatusPending,
	}
}

// insertDoc inserts a new document of tenant and returns it as stored.
func (f *docFixture) insertDoc(tenant, name string) *docket.Document {
	f.t.Helper()
	doc := f.newDoc(name)
	f.write(tenant, func(tx docket.Tx) error { return tx.DocumentInsert(f.ctx, doc) })
	return f.getDoc(tenant, doc.ID)
}

// getDoc returns a document that must exist.
func (f *docFixture) getDoc(tenant, id string) *docket.Document {
	f.t.Helper()
	var doc *docket.Document
	f.read(tenant, func(tx docket.Tx) (err error) {
		doc, err = tx.DocumentGet(f.ctx, id)
		return err
	})
	return doc
}

// getDocErr returns DocumentGet's error.
func (f *docFixture) getDocErr(tenant, id string) error {
	return f.s.ReadTenant(f.ctx, tenant, func(tx docket.Tx) error {
		_, err := tx.DocumentGet(f.ctx, id)
		return err
	})
}

// updateDoc updates a document and returns it.
func (f *docFixture) updateDoc(tenant string, p *docket.DocumentUpdateParams) *docket.Document {
	f.t.Helper()
	var doc *docket.Document
	f.write(tenant, func(tx docket.Tx) (err error) {
		doc, err = tx.DocumentUpdate(f.ctx, p)
		return err
	})
	return doc
}

// listDocs lists a tenant's documents.
func (f *docFixture) listDocs(tenant string, p *docket.DocumentListParams) []*docket.Document {
	f.t.Helper()
	var docs []*docket.Document
	f.read(tenant, func(tx docket.Tx) (err error) {
		docs, err = tx.DocumentList(f.ctx, p)
		return err
	})
	return docs
}

// wantDocIDs fails the check unless docs are the documents ids, in order.
func (f *docFixture) wantDocIDs(what string, docs []*docket.Document, ids ...string) {
	f.t.Helper()
	got := make([]string, len(docs))
	for i, d := range docs {
		got[i] = d.ID
	}
	if fmt.Sprint(got) != fmt.Sprint(ids) {
		f.t.Fatalf("%s: got documents %v, want %v", what, got, ids)
	}
}

// dWantErr fails t unless err wraps target.
func dWantErr(t testing.TB, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error %v, want %v", what, err, target)
	}
}

// dNear fails t unless got is within clockSlack of want.
func dNear(t testing.TB, what string, got, want time.Time) {
	t.Helper()
	if d := got.Sub(want); got.IsZero() || d < -clockSlack || d > clockSlack {
		t.Fatalf("%s = %v, want within %v of %v", what, got, clockSlack, want)
	}
}

// dEventually polls cond until it holds, failing t after waitTimeout.
func dEventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", waitTimeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// dSameTime fails t unless got is want as stored: equal to the millisecond
// (the coarsest precision a driver may keep).
func dSameTime(t testing.TB, what string, got, want time.Time) {
	t.Helper()
	if d := got.Sub(want); d < -time.Millisecond || d > time.Millisecond {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}
