package webtest_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/web"
	"github.com/docketq/docket/web/webtest"
)

// The dashboard loads in a real Chromium under its Content-Security-Policy
// without an error, and waits for a key. (cmd/docket's TestDashboard_Browser
// drives it against a running server.)
func TestDashboard_Loads(t *testing.T) {
	t.Parallel()
	b := webtest.Start(t)
	srv := httptest.NewServer(web.Handler())
	defer srv.Close()
	p := b.NewPage(t)
	p.Navigate(srv.URL + "/")
	if got := p.Text("h1"); got != "Docket" {
		t.Errorf("heading %q, want Docket", got)
	}
	p.WaitFor("the stylesheet", `getComputedStyle(document.querySelector("header")).display === "flex"`, 5*time.Second)
	if got := p.Text("#conn"); got != "not connected" {
		t.Errorf("status %q, want not connected", got)
	}
	if ex := p.Exceptions(); len(ex) > 0 {
		t.Errorf("the page threw:\n%s", strings.Join(ex, "\n"))
	}
	for _, line := range p.Console() {
		if strings.Contains(line, "Content Security Policy") {
			t.Errorf("CSP violation: %s", line)
		}
	}
}

// Axe finds what is wrong: an image without a text alternative and a
// button without a name are serious violations.
func TestPage_Axe(t *testing.T) {
	t.Parallel()
	b := webtest.Start(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><html lang="en"><head><title>t</title></head><body><main>` +
			`<img src="data:,"><button></button></main></body></html>`))
	}))
	defer srv.Close()
	p := b.NewPage(t)
	p.Navigate(srv.URL + "/")
	var ids []string
	for _, v := range webtest.Serious(p.Axe()) {
		ids = append(ids, v.ID)
	}
	if !slices.Contains(ids, "image-alt") || !slices.Contains(ids, "button-name") {
		t.Errorf("serious violations %q, want image-alt and button-name", ids)
	}
}
