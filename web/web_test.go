package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docketq/docket/web"
)

func TestHandler(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(web.Handler())
	defer srv.Close()
	for _, tc := range []struct {
		path, contentType, contains string
		status                      int
	}{
		{"/", "text/html", "<title>Docket</title>", 200},
		{"/ui/app.js", "javascript", "/v1/events", 200},
		{"/ui/app.css", "text/css", "body", 200},
		{"/ui/nope.js", "", "", 404},
		{"/ui/", "", "", 404},
	} {
		t.Run(tc.path, func(t *testing.T) {
			res, err := http.Get(srv.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.status)
			}
			if tc.status != 200 {
				return
			}
			if ct := res.Header.Get("Content-Type"); !strings.Contains(ct, tc.contentType) {
				t.Errorf("Content-Type %q, want %q", ct, tc.contentType)
			}
			if !strings.Contains(string(body), tc.contains) {
				t.Errorf("body lacks %q", tc.contains)
			}
			if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
				t.Errorf("CSP %q", csp)
			}
		})
	}
}

// The page never puts data into the DOM as HTML: every text goes in with
// textContent, so a document named <script> stays text.
func TestApp_NoHTMLInjection(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(web.Handler())
	defer srv.Close()
	res, err := http.Get(srv.URL + "/ui/app.js")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	js, _ := io.ReadAll(res.Body)
	for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("} {
		if strings.Contains(string(js), sink) {
			t.Errorf("app.js uses %s", sink)
		}
	}
}

// The dashboard keeps the API key for the tab's session only
// (sessionStorage, never localStorage) and has a button that forgets it.
func TestHandler_KeyForTheSessionOnly(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(web.Handler())
	defer srv.Close()
	get := func(path string) string {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	js, page := get("/ui/app.js"), get("/")
	if strings.Contains(js, "localStorage") || !strings.Contains(js, "sessionStorage") {
		t.Error("app.js keeps the key beyond the session: want sessionStorage only")
	}
	if !strings.Contains(page, `id="forget"`) || !strings.Contains(js, `$("forget")`) {
		t.Error("no button to forget the key")
	}
}
