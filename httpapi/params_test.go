package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// A NUL byte or invalid UTF-8 in a query parameter (name or value) or a
// path segment is refused with 400 and a problem, on every route and both
// stores, before it can reach a database that refuses such text.
func TestServer_BadTextInRequest(t *testing.T) {
	t.Parallel()
	const admin = "an-admin-key-for-the-bad-text-test-0123456789"
	forEachStore(t, func(c *Config) { c.AdminKey = admin }, func(t *testing.T, e *tenantEnv) {
		tn := e.newTenant(t, "a", 0)
		for _, tc := range []struct{ method, path, key string }{
			{http.MethodGet, "/v1/search?q=%00", tn.key},
			{http.MethodGet, "/v1/search?q=%ff", tn.key},
			{http.MethodGet, "/v1/search?q=x&document_id=%00", tn.key},
			{http.MethodGet, "/v1/search?q=x&document_id=%ff", tn.key},
			{http.MethodGet, "/v1/documents?cursor=%ff", tn.key},
			{http.MethodGet, "/v1/documents?cursor=%00", tn.key},
			{http.MethodGet, "/v1/documents?status=%ff", tn.key},
			{http.MethodGet, "/v1/jobs?cursor=%c3%28", tn.key},
			{http.MethodGet, "/v1/documents?%ff=1", tn.key},
			{http.MethodGet, "/v1/documents?a=%zz", tn.key},
			{http.MethodGet, "/v1/documents/%00", tn.key},
			{http.MethodGet, "/v1/admin/tenants?cursor=%ff", admin},
			{http.MethodGet, "/v1/admin/tenants/%ff", admin},
			{http.MethodGet, "/v1/admin/tenants/a%00b", admin},
			{http.MethodGet, "/v1/admin/jobs/failed?tenant_id=%00", admin},
			{http.MethodPost, "/v1/admin/queues/%ff/pause", admin},
		} {
			r := e.do(t, tc.method, tc.path, tc.key, nil)
			if r.status != http.StatusBadRequest || !strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") {
				t.Errorf("%s %s: %d %s %s, want a 400 problem", tc.method, tc.path, r.status, r.header.Get("Content-Type"), r.body)
			}
		}
		// JSON bodies: the escape \u0000 decodes to a NUL, which no store
		// keeps as text: refused before a store, never a 500 or a name cut.
		for _, tc := range []struct{ method, path, key, body string }{
			{http.MethodPost, "/v1/admin/tenants", admin, `{"name":"a\u0000b"}`},
			{http.MethodPatch, "/v1/admin/tenants/" + tn.id, admin, `{"name":"\u0000"}`},
			{http.MethodPatch, "/v1/admin/tenants/" + tn.id, admin, `{"plan":"pro\u0000"}`},
			{http.MethodPost, "/v1/admin/tenants/" + tn.id + "/keys", admin, `{"name":"k\u0000"}`},
			{http.MethodPost, "/v1/dispatch/jobs", tn.key, `{"kind":"k\u0000","args":{}}`},
			{http.MethodPost, "/v1/dispatch/jobs", tn.key, `{"kind":"k","unique_key":"u\u0000","args":{}}`},
		} {
			r := e.do(t, tc.method, tc.path, tc.key, strings.NewReader(tc.body), "Content-Type", "application/json")
			if r.status/100 != 4 {
				t.Errorf("%s %s %s: %d %s, want a 4xx", tc.method, tc.path, tc.body, r.status, r.body)
			}
		}
	})
}

func TestHasNULEscape(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		`{"a":"\u0000"}`:     true,
		`{"a":"x\\\u0000"}`:  true,
		`{"a":"\\u0000"}`:    false,
		`{"a":"\\\\u0000"}`:  false,
		`{"a":"u0000"}`:      false,
		`{"a":"\u00001"}`:    true,
		`{"a":"\u0001"}`:     false,
		`{"u0000":"\u0000"}`: true,
	} {
		if got := hasNULEscape([]byte(in)); got != want {
			t.Errorf("hasNULEscape(%s) = %v, want %v", in, got, want)
		}
	}
}
