package httpapi_test

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue"
)

// routeParam matches a pattern's wildcard ("{id}").
var routeParam = regexp.MustCompile(`\{[a-z_]+\}`)

func TestAdmin_Auth(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	ct := e.createTenant("acme", nil)
	var n int
	for _, rt := range e.srv.Routes() {
		if !rt.Admin {
			continue
		}
		n++
		path := routeParam.ReplaceAllString(rt.Pattern, "1")
		for _, key := range []string{"", "wrong-key", ct.APIKey, testAdminKey + "x"} {
			r := e.do(rt.Method, path, key, nil)
			if r.status != http.StatusUnauthorized {
				t.Errorf("%s %s with key %q: status %d, want 401", rt.Method, path, key, r.status)
			}
			if ctype := r.header.Get("Content-Type"); ctype != "application/problem+json" {
				t.Errorf("%s %s: Content-Type %q, want application/problem+json", rt.Method, path, ctype)
			}
		}
	}
	if n < 12 {
		t.Errorf("%d admin routes, want at least 12", n)
	}
	off := newAdminEnv(t, func(c *httpapi.Config) { c.AdminKey = "" })
	if r := off.do("GET", "/v1/admin/tenants", testAdminKey, nil); r.status != http.StatusUnauthorized {
		t.Errorf("admin API disabled: status %d, want 401", r.status)
	}
}

func TestAdmin_TenantCreate(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	ct := e.createTenant("acme", map[string]any{"plan": "pro", "concurrency": 3, "rate_limit": 20})
	tv := ct.Tenant
	if tv.ID == "" || tv.Name != "acme" || tv.Plan != "pro" || tv.Concurrency != 3 || tv.RateLimit != 20 || tv.UploadsPerHour != 20 {
		t.Errorf("tenant = %+v", tv)
	}
	if !strings.HasPrefix(ct.APIKey, "dk_") || ct.Key.ID == "" || !strings.Contains(ct.APIKey, ct.Key.ID) {
		t.Errorf("api_key %q, key %+v", ct.APIKey, ct.Key)
	}
	_, job := e.addDocument(tv.ID, "a.txt")
	if got := e.tenantLimit(job.ID); got != 3 {
		t.Errorf("queue limit after create = %d, want 3", got)
	}
	var got struct {
		Tenant httpapi.TenantView   `json:"tenant"`
		Keys   []httpapi.APIKeyView `json:"keys"`
	}
	e.admin("GET", "/v1/admin/tenants/"+tv.ID, nil, http.StatusOK).decode(t, &got)
	if got.Tenant.ID != tv.ID || len(got.Keys) != 1 || got.Keys[0].ID != ct.Key.ID || got.Keys[0].RevokedAt != nil {
		t.Errorf("GET tenant = %+v", got)
	}
	if strings.Contains(string(e.admin("GET", "/v1/admin/tenants/"+tv.ID, nil, 200).body), ct.APIKey) {
		t.Error("GET tenant shows the key itself")
	}
	e.createTenant("globex", nil)
	var list struct {
		Tenants []httpapi.TenantView `json:"tenants"`
	}
	e.admin("GET", "/v1/admin/tenants", nil, http.StatusOK).decode(t, &list)
	if len(list.Tenants) != 2 || list.Tenants[0].Name != "acme" || list.Tenants[1].Plan != "free" || list.Tenants[1].Concurrency != 1 {
		t.Errorf("tenants = %+v", list.Tenants)
	}
}

func TestAdmin_TenantInvalid(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	id := e.createTenant("acme", nil).Tenant.ID
	for _, tc := range []struct {
		name, method, path string
		body               any
		want               int
	}{
		{"unknown plan", "POST", "/v1/admin/tenants", `{"name":"x","plan":"gold"}`, 400},
		{"concurrency 0", "POST", "/v1/admin/tenants", `{"name":"x","concurrency":0}`, 400},
		{"concurrency 1001", "POST", "/v1/admin/tenants", `{"name":"x","concurrency":1001}`, 400},
		{"negative rate limit", "POST", "/v1/admin/tenants", `{"name":"x","rate_limit":-1}`, 400},
		{"negative weight", "POST", "/v1/admin/tenants", `{"name":"x","weight":-1}`, 400},
		{"weight 1001", "POST", "/v1/admin/tenants", `{"name":"x","weight":1001}`, 400},
		{"no name", "POST", "/v1/admin/tenants", `{"plan":"free"}`, 400},
		{"blank name", "POST", "/v1/admin/tenants", `{"name":"  "}`, 400},
		{"unknown field", "POST", "/v1/admin/tenants", `{"name":"x","color":"red"}`, 400},
		{"not JSON", "POST", "/v1/admin/tenants", `name=x`, 400},
		{"taken name", "POST", "/v1/admin/tenants", `{"name":"acme"}`, 409},
		{"patch nothing", "PATCH", "/v1/admin/tenants/" + id, `{}`, 400},
		{"patch unknown plan", "PATCH", "/v1/admin/tenants/" + id, `{"plan":"gold"}`, 400},
		{"patch concurrency -1", "PATCH", "/v1/admin/tenants/" + id, `{"concurrency":-1}`, 400},
		{"patch concurrency 5000", "PATCH", "/v1/admin/tenants/" + id, `{"concurrency":5000}`, 400},
		{"patch weight -1", "PATCH", "/v1/admin/tenants/" + id, `{"weight":-1}`, 400},
		{"patch weight 1001", "PATCH", "/v1/admin/tenants/" + id, `{"weight":1001}`, 400},
		{"patch weight not a number", "PATCH", "/v1/admin/tenants/" + id, `{"weight":"8"}`, 400},
		{"patch unknown tenant", "PATCH", "/v1/admin/tenants/nope", `{"plan":"pro"}`, 404},
		{"get unknown tenant", "GET", "/v1/admin/tenants/nope", nil, 404},
		{"key for unknown tenant", "POST", "/v1/admin/tenants/nope/keys", nil, 404},
		{"revoke unknown key", "DELETE", "/v1/admin/tenants/" + id + "/keys/nope", nil, 404},
	} {
		r := e.do(tc.method, tc.path, testAdminKey, tc.body)
		if r.status != tc.want {
			t.Errorf("%s: status %d, want %d: %s", tc.name, r.status, tc.want, r.body)
		}
	}
	var got struct {
		Tenant httpapi.TenantView `json:"tenant"`
	}
	e.admin("GET", "/v1/admin/tenants/"+id, nil, 200).decode(t, &got)
	if got.Tenant.Plan != "free" || got.Tenant.Concurrency != 1 || got.Tenant.Weight != 0 || got.Tenant.EffectiveWeight != 1 {
		t.Errorf("tenant changed by refused requests: %+v", got.Tenant)
	}
}

// TestAdmin_TenantNameTaken: a taken name, on create or rename, is a 409
// that says so, without the database's text.
func TestAdmin_TenantNameTaken(t *testing.T) {
	t.Parallel()
	for _, b := range httpapi.TestBackends {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := newAdminEnvStore(t, httpapi.OpenTestStore(t, b), nil)
			e.createTenant("acme", nil)
			other := e.createTenant("globex", nil).Tenant.ID
			for _, r := range []*envResponse{
				e.admin("POST", "/v1/admin/tenants", map[string]any{"name": "acme"}, http.StatusConflict),
				e.admin("PATCH", "/v1/admin/tenants/"+other, map[string]any{"name": "acme"}, http.StatusConflict),
			} {
				var p struct {
					Detail string `json:"detail"`
				}
				r.decode(t, &p)
				if want := `a tenant named "acme" already exists`; p.Detail != want {
					t.Errorf("detail %q, want %q", p.Detail, want)
				}
			}
		})
	}
}

func TestAdmin_TenantUpdate(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	id := e.createTenant("acme", map[string]any{"concurrency": 2}).Tenant.ID
	_, job := e.addDocument(id, "a.txt")
	if got := e.tenantLimit(job.ID); got != 2 {
		t.Fatalf("queue limit = %d, want 2", got)
	}
	var got struct {
		Tenant httpapi.TenantView `json:"tenant"`
	}
	e.admin("PATCH", "/v1/admin/tenants/"+id, map[string]any{"plan": "enterprise", "concurrency": 7}, 200).decode(t, &got)
	if got.Tenant.Plan != "enterprise" || got.Tenant.Concurrency != 7 || got.Tenant.UploadsPerHour != 1000 {
		t.Errorf("tenant = %+v", got.Tenant)
	}
	if got := e.tenantLimit(job.ID); got != 7 {
		t.Errorf("queue limit after PATCH = %d, want 7", got)
	}
	e.admin("PATCH", "/v1/admin/tenants/"+id, map[string]any{"rate_limit": 25}, 200).decode(t, &got)
	if got.Tenant.RateLimit != 25 || got.Tenant.UploadsPerHour != 25 || got.Tenant.Concurrency != 7 {
		t.Errorf("tenant = %+v", got.Tenant)
	}
}

// tenantLimit is the concurrency limit the queue applies to the tenant of
// a pending job.
func (e *adminEnv) tenantLimit(jobID int64) int {
	e.t.Helper()
	p, err := e.driver.Executor().JobPosition(e.ctx, jobID)
	if err != nil {
		e.t.Fatalf("position of job %d: %v", jobID, err)
	}
	return p.Limit
}

// probeRoute is the tenant route the key tests call.
const probeRoute = "/v1/rate-limit"

func TestAdmin_KeyLifecycle(t *testing.T) {
	t.Parallel()
	// A short cache TTL: a second server sharing the store learns of a
	// revocation within it.
	e := newAdminEnv(t, func(c *httpapi.Config) { c.AuthCacheTTL = 50 * time.Millisecond })
	if !slices.ContainsFunc(e.srv.Routes(), func(r httpapi.RouteInfo) bool { return r.Pattern == probeRoute }) {
		t.Skip("GET " + probeRoute + " is not served yet")
	}
	other := e.peer()
	ct := e.createTenant("acme", nil)
	for _, s := range []*adminEnv{e, other} {
		if r := s.do("GET", probeRoute, ct.APIKey, nil); r.status != http.StatusOK {
			t.Fatalf("new key: status %d: %s", r.status, r.body)
		}
	}
	var second struct {
		APIKey string             `json:"api_key"`
		Key    httpapi.APIKeyView `json:"key"`
	}
	e.admin("POST", "/v1/admin/tenants/"+ct.Tenant.ID+"/keys", `{"name":"ci"}`, http.StatusCreated).decode(t, &second)
	if second.Key.Name != "ci" || second.Key.TenantID != ct.Tenant.ID {
		t.Errorf("second key = %+v", second.Key)
	}
	e.admin("DELETE", "/v1/admin/tenants/"+ct.Tenant.ID+"/keys/"+ct.Key.ID, nil, http.StatusNoContent)
	if r := e.do("GET", probeRoute, ct.APIKey, nil); r.status != http.StatusUnauthorized {
		t.Errorf("revoked key on the revoking server: status %d, want 401", r.status)
	}
	pollUntil(t, "the revoked key to fail on the other server", func() bool {
		return other.do("GET", probeRoute, ct.APIKey, nil).status == http.StatusUnauthorized
	})
	if r := other.do("GET", probeRoute, second.APIKey, nil); r.status != http.StatusOK {
		t.Errorf("second key after revoking the first: status %d", r.status)
	}
	// A key of another tenant cannot be revoked through this tenant.
	b := e.createTenant("globex", nil)
	e.admin("DELETE", "/v1/admin/tenants/"+ct.Tenant.ID+"/keys/"+b.Key.ID, nil, http.StatusNotFound)
}

// peer starts a second server on the same store and queue.
func (e *adminEnv) peer() *adminEnv {
	e.t.Helper()
	srv, err := httpapi.New(httpapi.Config{
		Store: e.driver, Queue: e.queue, Blobs: e.blobs, Embedder: embeddingForTests(),
		AdminKey: testAdminKey, AuthCacheTTL: 50 * time.Millisecond,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	p := *e
	p.srv = srv
	p.url = startAPIServer(e.t, srv)
	return &p
}

// jobState reads a job's state.
func (e *adminEnv) jobState(id int64) queue.State { return e.getJob(id).State }
