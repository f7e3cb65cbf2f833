package httpapi_test

import (
	"net/http"
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
