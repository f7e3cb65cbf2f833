package storetest

import (
	"bytes"
	"crypto/sha256"
	"time"

	"github.com/docketq/docket"
)

func apiKeyChecks() []docCheck {
	return []docCheck{
		{"InsertGet", checkAPIKeyInsertGet},
		{"InsertErrors", checkAPIKeyInsertErrors},
		{"GetUnknown", func(f *docFixture) {
			_, err := f.s.APIKeyGet(f.ctx, "nokey")
			dWantErr(f.t, "APIKeyGet(unknown)", err, docket.ErrNotFound)
		}},
		{"ListOldestFirst", checkAPIKeyList},
		{"Revoke", checkAPIKeyRevoke},
		{"Expired", checkAPIKeyExpired},
	}
}

// newKey returns a key of tenant with id id, created now.
func newKey(tenant, id string) *docket.APIKey {
	h := sha256.Sum256([]byte("secret-" + id))
	return &docket.APIKey{ID: id, TenantID: tenant, Hash: h[:], Name: "key " + id, CreatedAt: time.Now()}
}

func (f *docFixture) insertKey(k *docket.APIKey) {
	f.t.Helper()
	if err := f.s.APIKeyInsert(f.ctx, k); err != nil {
		f.t.Fatalf("APIKeyInsert(%s): %v", k.ID, err)
	}
}

func (f *docFixture) getKey(id string) *docket.APIKey {
	f.t.Helper()
	k, err := f.s.APIKeyGet(f.ctx, id)
	if err != nil {
		f.t.Fatalf("APIKeyGet(%s): %v", id, err)
	}
	return k
}

func checkAPIKeyInsertGet(f *docFixture) {
	tn := f.tenant("a")
	want := newKey(tn.ID, "k1")
	f.insertKey(want)
	got := f.getKey("k1")
	if got.ID != want.ID || got.TenantID != tn.ID || got.Name != want.Name || !bytes.Equal(got.Hash, want.Hash) {
		f.t.Fatalf("APIKeyGet = %+v, want %+v", got, want)
	}
	dNear(f.t, "CreatedAt", got.CreatedAt, want.CreatedAt)
	if !got.ExpiresAt.IsZero() || !got.RevokedAt.IsZero() {
		f.t.Fatalf("new key: ExpiresAt %v, RevokedAt %v, want both zero", got.ExpiresAt, got.RevokedAt)
	}
	if !got.Usable(time.Now()) {
		f.t.Fatal("a new key without expiry is not Usable")
	}
}

func checkAPIKeyInsertErrors(f *docFixture) {
	tn := f.tenant("a")
	f.insertKey(newKey(tn.ID, "k1"))
	dup := newKey(tn.ID, "k1")
	dup.Name = "duplicate"
	dWantErr(f.t, "APIKeyInsert(taken id)", f.s.APIKeyInsert(f.ctx, dup), docket.ErrDuplicate)
	if got := f.getKey("k1"); got.Name != "key k1" {
		f.t.Fatalf("key after a refused duplicate insert has name %q", got.Name)
	}
	dWantErr(f.t, "APIKeyInsert(unknown tenant)", f.s.APIKeyInsert(f.ctx, newKey("t_nobody", "k2")), docket.ErrNotFound)
	_, err := f.s.APIKeyGet(f.ctx, "k2")
	dWantErr(f.t, "APIKeyGet(key of an unknown tenant)", err, docket.ErrNotFound)
}

func checkAPIKeyList(f *docFixture) {
	a, b := f.tenant("a"), f.tenant("b")
	for _, id := range []string{"k1", "k2", "k3"} {
		f.insertKey(newKey(a.ID, id))
	}
	f.insertKey(newKey(b.ID, "kb"))
	keys, err := f.s.APIKeyList(f.ctx, a.ID)
	if err != nil {
		f.t.Fatalf("APIKeyList: %v", err)
	}
	if len(keys) != 3 {
		f.t.Fatalf("APIKeyList: %d keys, want 3 (only the tenant's)", len(keys))
	}
	for i, k := range keys {
		if want := []string{"k1", "k2", "k3"}[i]; k.ID != want || k.TenantID != a.ID {
			f.t.Fatalf("APIKeyList[%d] = %s of %s, want %s of %s: oldest first", i, k.ID, k.TenantID, want, a.ID)
		}
	}
}

func checkAPIKeyRevoke(f *docFixture) {
	a, b := f.tenant("a"), f.tenant("b")
	f.insertKey(newKey(a.ID, "k1"))
	dWantErr(f.t, "APIKeyRevoke(unknown)", f.s.APIKeyRevoke(f.ctx, a.ID, "nokey"), docket.ErrNotFound)
	dWantErr(f.t, "APIKeyRevoke(another tenant's key)", f.s.APIKeyRevoke(f.ctx, b.ID, "k1"), docket.ErrNotFound)
	if k := f.getKey("k1"); !k.RevokedAt.IsZero() {
		f.t.Fatalf("key revoked by another tenant: RevokedAt %v", k.RevokedAt)
	}
	before := time.Now()
	if err := f.s.APIKeyRevoke(f.ctx, a.ID, "k1"); err != nil {
		f.t.Fatalf("APIKeyRevoke: %v", err)
	}
	k := f.getKey("k1")
	dNear(f.t, "RevokedAt", k.RevokedAt, before)
	if k.Usable(time.Now()) {
		f.t.Fatal("a revoked key is Usable")
	}
	keys, err := f.s.APIKeyList(f.ctx, a.ID)
	if err != nil || len(keys) != 1 || keys[0].RevokedAt.IsZero() {
		f.t.Fatalf("APIKeyList after revoke: %v, %v; want the revoked key", keys, err)
	}
}

func checkAPIKeyExpired(f *docFixture) {
	tn := f.tenant("a")
	past, future := newKey(tn.ID, "past"), newKey(tn.ID, "future")
	past.ExpiresAt = time.Now().Add(-time.Minute)
	future.ExpiresAt = time.Now().Add(time.Hour)
	f.insertKey(past)
	f.insertKey(future)
	now := time.Now()
	p, fu := f.getKey("past"), f.getKey("future")
	dSameTime(f.t, "expired key's ExpiresAt", p.ExpiresAt, past.ExpiresAt)
	dSameTime(f.t, "future key's ExpiresAt", fu.ExpiresAt, future.ExpiresAt)
	if p.Usable(now) || !fu.Usable(now) {
		f.t.Fatalf("Usable: expired key %v, unexpired key %v; want false, true", p.Usable(now), fu.Usable(now))
	}
}
