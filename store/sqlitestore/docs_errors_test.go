package sqlitestore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/docketq/docket"
)

// TestDocs_Errors: SQLite's constraint errors come back as the domain's
// sentinels, and another tenant's objects are not found.
func TestDocs_Errors(t *testing.T) {
	t.Parallel()
	d, _ := setupDocs(t)
	ctx := t.Context()
	if _, err := d.TenantCreate(ctx, &docket.TenantCreateParams{ID: "t2", Name: "two"}); err != nil {
		t.Fatalf("TenantCreate: %v", err)
	}
	inTenant(t, d, func(tx docket.Tx) error { return tx.DocumentInsert(ctx, newDoc("d1")) })
	inT2 := func(fn func(tx docket.Tx) error) error { return d.InTenant(ctx, "t2", fn) }
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"tenant id taken", tenantErr(d, &docket.TenantCreateParams{ID: "t1", Name: "new"}), docket.ErrDuplicate},
		{"tenant name taken", tenantErr(d, &docket.TenantCreateParams{ID: "t3", Name: "one"}), docket.ErrDuplicate},
		{"bad plan", tenantErr(d, &docket.TenantCreateParams{ID: "t3", Name: "x", Plan: "gold"}), docket.ErrInvalid},
		{"bad tenant id", tenantErr(d, &docket.TenantCreateParams{ID: "a/b", Name: "x"}), docket.ErrInvalid},
		{"update unknown tenant", func() error {
			name := "nine" // valid: the update is checked before the tenant is read, as on PostgreSQL
			_, err := d.TenantUpdate(ctx, &docket.TenantUpdateParams{ID: "t9", Name: &name})
			return err
		}(), docket.ErrNotFound},
		{"rename to a taken name", func() error {
			name := "one"
			_, err := d.TenantUpdate(ctx, &docket.TenantUpdateParams{ID: "t2", Name: &name})
			return err
		}(), docket.ErrDuplicate},
		{"api key of unknown tenant", d.APIKeyInsert(ctx, &docket.APIKey{ID: "k", TenantID: "t9", Hash: []byte{1}}), docket.ErrNotFound},
		{"document of unknown tenant", d.InTenant(ctx, "t9", func(tx docket.Tx) error { return tx.DocumentInsert(ctx, newDoc("d9")) }), docket.ErrNotFound},
		{"document id taken", d.InTenant(ctx, "t1", func(tx docket.Tx) error { return tx.DocumentInsert(ctx, newDoc("d1")) }), docket.ErrDuplicate},
		{"get another tenant's document", inT2(func(tx docket.Tx) error { _, err := tx.DocumentGet(ctx, "d1"); return err }), docket.ErrNotFound},
		{"update another tenant's document", inT2(func(tx docket.Tx) error {
			_, err := tx.DocumentUpdate(ctx, &docket.DocumentUpdateParams{ID: "d1", Warnings: []string{"x"}})
			return err
		}), docket.ErrNotFound},
		{"delete another tenant's document", inT2(func(tx docket.Tx) error { _, err := tx.DocumentDelete(ctx, "d1"); return err }), docket.ErrNotFound},
		{"chunks of another tenant's document", inT2(func(tx docket.Tx) error { return tx.ChunkReplace(ctx, "d1", nil) }), docket.ErrNotFound},
		{"write in ReadTenant", d.ReadTenant(ctx, "t1", func(tx docket.Tx) error { return tx.DocumentInsert(ctx, newDoc("d2")) }), docket.ErrInvalid},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: error %v, want %v", tt.name, tt.err, tt.want)
		}
	}
	if doc, err := getDoc(t, d, "t1", "d1"); err != nil || doc.Warnings != nil {
		t.Fatalf("t1's document after t2's attempts: %+v, %v", doc, err)
	}
}

func tenantErr(d *testStore, p *docket.TenantCreateParams) error {
	_, err := d.TenantCreate(context.Background(), p)
	return err
}

// TestDocs_IdempotencyDuplicate: a second record of a key is ErrDuplicate
// and the first is kept.
func TestDocs_IdempotencyDuplicate(t *testing.T) {
	t.Parallel()
	d, _ := setupDocs(t)
	ctx := t.Context()
	rec := &docket.IdempotencyRecord{Key: "k", RequestHash: "h", StatusCode: 202, Body: []byte(`{"a":1}`), DocumentID: "d1"}
	inTenant(t, d, func(tx docket.Tx) error { return tx.IdempotencyInsert(ctx, rec) })
	err := d.InTenant(ctx, "t1", func(tx docket.Tx) error {
		return tx.IdempotencyInsert(ctx, &docket.IdempotencyRecord{Key: "k", RequestHash: "other", StatusCode: 500})
	})
	if !errors.Is(err, docket.ErrDuplicate) {
		t.Fatalf("second IdempotencyInsert = %v, want ErrDuplicate", err)
	}
	err = d.ReadTenant(ctx, "t1", func(tx docket.Tx) error {
		got, err := tx.IdempotencyGet(ctx, "k")
		if err == nil && (got.RequestHash != "h" || got.StatusCode != 202 || string(got.Body) != `{"a":1}`) {
			t.Errorf("IdempotencyGet = %+v", got)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.TenantCreate(ctx, &docket.TenantCreateParams{ID: "t2", Name: "two"})
	if err == nil {
		err = d.ReadTenant(ctx, "t2", func(tx docket.Tx) error { _, err := tx.IdempotencyGet(ctx, "k"); return err })
	}
	if !errors.Is(err, docket.ErrNotFound) {
		t.Fatalf("another tenant's IdempotencyGet = %v, want ErrNotFound", err)
	}
}
