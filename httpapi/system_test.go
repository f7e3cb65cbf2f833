package httpapi_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestSystem_Healthz(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	r := e.do("GET", "/healthz", "", nil)
	if r.status != 200 || strings.TrimSpace(string(r.body)) != `{"status":"ok"}` {
		t.Errorf("healthz: %d %s", r.status, r.body)
	}
	_ = e.driver.Close() // liveness does not depend on the store
	if r := e.do("GET", "/healthz", "", nil); r.status != 200 {
		t.Errorf("healthz with the store closed: %d", r.status)
	}
}

func TestSystem_Readyz(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	if r := e.do("GET", "/readyz", "", nil); r.status != 200 {
		t.Fatalf("readyz: %d %s", r.status, r.body)
	}
	_ = e.driver.Close()
	r := e.do("GET", "/readyz", "", nil)
	var p struct {
		Status int    `json:"status"`
		Title  string `json:"title"`
	}
	r.decode(t, &p)
	if r.status != http.StatusServiceUnavailable || p.Status != 503 || r.header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("readyz with the store closed: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
	}
}

func TestSystem_Metrics(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	a := e.createTenant("acme", nil).Tenant.ID
	e.addDocument(a, "a.txt")
	e.addDocument(a, "b.txt")
	e.do("GET", "/healthz", "", nil)
	e.do("GET", "/v1/admin/queue", "wrong", nil)
	r := e.do("GET", "/metrics", "", nil)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("metrics: %d %s", r.status, r.header.Get("Content-Type"))
	}
	body := string(r.body)
	for _, want := range []string{
		`docket_http_requests_total{route="GET /healthz",status="200"} 1`,
		`docket_http_requests_total{route="GET /v1/admin/queue",status="401"} 1`,
		`docket_http_requests_total{route="POST /v1/admin/tenants",status="201"} 1`,
		`# TYPE docket_jobs gauge`,
		`docket_jobs{queue="documents",state="pending"} 2`,
		`docket_jobs{queue="documents",state="running"} 0`,
		`docket_queue_oldest_pending_age_seconds{queue="documents"} `,
		`docket_store_dead_tuples `,
		`docket_store_oldest_transaction_age_seconds `,
		"docket_store_up 1\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
	checkPromSyntax(t, body)
	_ = e.driver.Close()
	r = e.do("GET", "/metrics", "", nil)
	if r.status != 200 || !strings.Contains(string(r.body), "docket_store_up 0\n") || strings.Contains(string(r.body), "docket_jobs{") {
		t.Errorf("metrics with the store closed: %d\n%s", r.status, r.body)
	}
}

// promSample matches a sample's name and labels.
var promSample = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-z_]+="[^"]*",?)*\})?$`)

// checkPromSyntax checks every line is a comment or "name{labels} value".
func checkPromSyntax(t *testing.T, body string) {
	t.Helper()
	for line := range strings.Lines(body) {
		line = strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(line, "# HELP ") || strings.HasPrefix(line, "# TYPE ") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 || !promSample.MatchString(line[:i]) {
			t.Errorf("bad metrics line %q", line)
			continue
		}
		if _, err := strconv.ParseFloat(line[i+1:], 64); err != nil {
			t.Errorf("bad metrics value in %q", line)
		}
	}
}

func TestSystem_OpenAPI(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	r := e.do("GET", "/v1/openapi.json", "", nil)
	var doc map[string]any
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" || json.Unmarshal(r.body, &doc) != nil {
		t.Fatalf("openapi.json: %d %s", r.status, r.header.Get("Content-Type"))
	}
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", doc["openapi"])
	}
}
