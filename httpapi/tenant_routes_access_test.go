package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/apikey"
	"github.com/docketq/docket/queue"
)

// TestTenantRoutes_Auth: a missing, malformed, revoked or expired key, or
// one with a bad checksum, is refused on every tenant route. A malformed key is refused before any store query.
func TestTenantRoutes_Auth(t *testing.T) {
	t.Parallel()
	e := newTenantEnv(t, nil)
	a := e.newTenant(t, "acme", 0)
	ctx := context.Background()
	revoked := e.newTenant(t, "revoked", 0)
	id, _ := apikey.Parse(revoked.key)
	if err := e.driver.APIKeyRevoke(ctx, revoked.id, id); err != nil {
		t.Fatal(err)
	}
	expired, err := apikey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	err = e.driver.APIKeyInsert(ctx, &docket.APIKey{ID: expired.ID, TenantID: a.id, Hash: expired.Hash, ExpiresAt: time.Now().Add(-time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	last := a.key[len(a.key)-1]
	badSum := a.key[:len(a.key)-1] + string("01"[boolInt(last == '0')])
	for _, rt := range e.srv.tenantRoutes() {
		path := strings.ReplaceAll(rt.pattern, "{id}", "1")
		for _, c := range []struct{ name, key string }{{"no key", ""}, {"bad checksum", badSum}, {"malformed", "dk_short"}} {
			before := e.store.calls.Load()
			e.do(t, rt.method, path, c.key, nil).want(t, http.StatusUnauthorized)
			if n := e.store.calls.Load() - before; n != 0 {
				t.Errorf("%s %s with %s: %d store calls, want 0", rt.method, path, c.name, n)
			}
		}
		e.do(t, rt.method, path, revoked.key, nil).want(t, http.StatusUnauthorized)
		e.do(t, rt.method, path, expired.Plain, nil).want(t, http.StatusUnauthorized)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestTenantRoutes_BOLA: every tenant route with an
// object id, called with tenant A's key and tenant B's id, answers 404 and
// changes nothing. A new route with an id fails this test until it is
// covered here.
func TestTenantRoutes_BOLA(t *testing.T) {
	t.Parallel()
	forEachStore(t, nil, func(t *testing.T, e *tenantEnv) {
		a := e.newTenant(t, "acme", 0)
		b := e.newTenant(t, "globex", 0)
		e.uploadOK(t, a.key, "A has a document too")
		failed := e.uploadOK(t, b.key, "B's failed document")
		j := e.claim(t)
		if j.TenantID == a.id {
			j = e.claim(t) // the claim is round-robin; take B's
		}
		e.finish(t, j, queue.OutcomeFailed)
		pending := e.uploadOK(t, b.key, "B's pending document")
		ids := map[string]string{
			"/v1/documents/": failed.Document.ID, // retry, delete would succeed for B
			"/v1/jobs/":      pending.Job.ID,     // cancel would succeed for B
		}
		blobs := e.blobCount(t)
		covered := 0
		for _, rt := range e.srv.table {
			prefix, _, hasID := strings.Cut(rt.pattern, "{id}")
			if rt.access != tenant || !hasID {
				continue
			}
			id, ok := ids[prefix]
			if !ok {
				t.Errorf("route %s %s: not covered by the BOLA sweep", rt.method, rt.pattern)
				continue
			}
			covered++
			for _, oid := range []string{id, "not-an-id", "-1", "00000000-0000-0000-0000-000000000000", "99999"} {
				path := strings.Replace(rt.pattern, "{id}", oid, 1)
				e.do(t, rt.method, path, a.key, nil).want(t, http.StatusNotFound)
			}
		}
		if covered < 6 {
			t.Errorf("%d routes with ids, want at least 6", covered)
		}
		e.checkUnchanged(t, b, failed, pending, blobs)
		// B's lists do not leak into A's.
		for _, path := range []string{"/v1/documents", "/v1/jobs", "/v1/search?q=document"} {
			r := e.do(t, http.MethodGet, path, a.key, nil).want(t, http.StatusOK)
			if strings.Contains(string(r.body), b.id) || strings.Contains(string(r.body), failed.Document.ID) {
				t.Errorf("%s shows B's objects: %s", path, r.body)
			}
		}
	})
}

// checkUnchanged checks that tenant b's objects are as they were before the
// BOLA sweep.
func (e *tenantEnv) checkUnchanged(t *testing.T, b apiTenant, failed, pending uploaded, blobs int) {
	t.Helper()
	var d DocumentView
	e.do(t, http.MethodGet, "/v1/documents/"+failed.Document.ID, b.key, nil).want(t, http.StatusOK).decode(t, &d)
	if d.Status != "failed" || d.JobID != failed.Job.ID {
		t.Errorf("B's failed document changed: %+v", d)
	}
	var pj JobView
	e.do(t, http.MethodGet, "/v1/jobs/"+pending.Job.ID, b.key, nil).want(t, http.StatusOK).decode(t, &pj)
	if pj.Status != "pending" {
		t.Errorf("B's pending job is %s", pj.Status)
	}
	if n := e.blobCount(t); n != blobs {
		t.Errorf("blobs %d, want %d", n, blobs)
	}
	jobs, _ := e.queue.List(context.Background(), &queue.JobListParams{TenantID: b.id})
	if len(jobs) != 2 {
		t.Errorf("B has %d jobs, want 2 (no retry)", len(jobs))
	}
}
