package web_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
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
		{"/ui/app.js", "javascript", "./js/stream.js", 200},
		{"/ui/js/stream.js", "javascript", "/v1/events", 200},
		{"/ui/admin.html", "text/html", "<title>Docket operator console</title>", 200},
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
	scripts := appScripts(t)
	if len(scripts) < 2 {
		t.Fatalf("scripts %v, want app.js and its modules", scripts)
	}
	for _, path := range scripts {
		js := get(t, srv.URL+path)
		for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"} {
			if strings.Contains(js, sink) {
				t.Errorf("%s uses %s", path, sink)
			}
		}
	}
}

// appScripts lists the dashboard's scripts as the dashboard serves them
// (/ui/...), from the directory that is embedded.
func appScripts(t *testing.T) []string {
	t.Helper()
	var out []string
	err := fs.WalkDir(os.DirFS("static"), ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".js") {
			out = append(out, "/ui/"+path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func get(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, res.StatusCode)
	}
	return string(b)
}

// The dashboard keeps the API key for the tab's session only
// (sessionStorage, never localStorage), has a button that forgets it, and
// never puts it in a URL (it travels in the Authorization header).
func TestHandler_KeyForTheSessionOnly(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(web.Handler())
	defer srv.Close()
	var js strings.Builder
	for _, path := range appScripts(t) {
		js.WriteString(get(t, srv.URL+path))
	}
	all, page := js.String(), get(t, srv.URL+"/")
	if strings.Contains(all, "localStorage") || !strings.Contains(all, "sessionStorage") {
		t.Error("the scripts keep the key beyond the session: want sessionStorage only")
	}
	if !strings.Contains(page, `id="forget"`) || !strings.Contains(all, `$("forget")`) {
		t.Error("no button to forget the key")
	}
	for _, leak := range []string{"?key=", "&key=", "api_key="} {
		if strings.Contains(all, leak) {
			t.Errorf("the scripts put the key in a URL (%s)", leak)
		}
	}
}
