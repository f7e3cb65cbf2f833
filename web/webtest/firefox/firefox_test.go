package firefox_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/web"
	"github.com/docketq/docket/web/webtest/firefox"
)

// One Firefox (its start is the dear part) runs the package's tests, each
// in its own tab. (Named TestDashboard… so that make test-browser runs it.)
func TestDashboard_Firefox(t *testing.T) {
	b := firefox.Start(t)
	t.Run("Loads", func(t *testing.T) { dashboardLoads(t, b) })
	t.Run("Page", func(t *testing.T) { pageActs(t, b) })
}

// The dashboard and the operator console load in a real Firefox under
// their Content-Security-Policy without an error, and wait for a key.
// (cmd/docket's TestDashboard_Firefox drives them against a running
// server.)
func dashboardLoads(t *testing.T, b *firefox.Browser) {
	srv := httptest.NewServer(web.Handler())
	defer srv.Close()
	for _, page := range []struct{ path, heading string }{
		{"/", "Docket"},
		{"/ui/admin.html", "Docket operator console"},
	} {
		p := b.NewPage(t)
		p.Navigate(srv.URL + page.path)
		if got := p.Text("h1"); got != page.heading {
			t.Errorf("%s: heading %q, want %q", page.path, got, page.heading)
		}
		p.WaitFor("the stylesheet", `getComputedStyle(document.querySelector("header")).display === "flex"`, 5*time.Second)
		p.WaitFor("the module to run", `document.querySelector("#conn").textContent === "not connected"`, 5*time.Second)
		if errs := p.Errors(); len(errs) > 0 {
			t.Errorf("%s logged errors:\n%s", page.path, strings.Join(errs, "\n"))
		}
	}
}

// testPage is a page under a strict Content-Security-Policy with a form,
// a file input, and a button that breaks the policy.
const testPage = `<!doctype html><html lang="en"><head><title>t</title><script src="/t.js"></script></head><body>
<form id="f"><input id="name"><button id="go" type="submit">Go</button></form>
<input id="file" type="file" multiple>
<output id="out"></output></body></html>`

const testScript = `addEventListener("DOMContentLoaded", () => {
	const out = document.querySelector("#out");
	document.querySelector("#f").addEventListener("submit", (ev) => {
		ev.preventDefault();
		out.textContent = "hello " + document.querySelector("#name").value;
	});
	document.querySelector("#file").addEventListener("change", (ev) => {
		out.textContent = [...ev.target.files].map((f) => f.name + ":" + f.size).join(",");
	});
});`

// The Page does what a user does (types, clicks, chooses files) and
// reports what the page logged at the error level: console.error, an
// uncaught exception, a rejected promise, a Content-Security-Policy
// violation; not console.log.
func pageActs(t *testing.T, b *firefox.Browser) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'")
		if r.URL.Path == "/t.js" {
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = w.Write([]byte(testScript))
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(testPage))
	}))
	defer srv.Close()
	p := b.NewPage(t)
	p.Navigate(srv.URL + "/")

	p.Type("#name", "Grüße")
	p.Click("#go")
	p.WaitFor("the form's answer", `document.querySelector("#out").textContent === "hello Grüße"`, 5*time.Second)

	dir := t.TempDir()
	a, c := filepath.Join(dir, "a.txt"), filepath.Join(dir, "c.pdf")
	for path, body := range map[string]string{a: "abc", c: "%PDF-1.7 12345"} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p.SetFiles("#file", a, c)
	p.WaitFor("the chosen files", `document.querySelector("#out").textContent === "a.txt:3,c.pdf:14"`, 5*time.Second)

	var n int
	p.Eval(`[1, 2, 3].length`, &n)
	if n != 3 {
		t.Errorf("Eval: %d, want 3", n)
	}
	if errs := p.Errors(); len(errs) > 0 {
		t.Fatalf("errors before any was made: %q", errs)
	}
	p.Eval(`(() => {
		console.log("just saying");
		console.error("console error");
		setTimeout(() => { throw new Error("thrown later"); });
		Promise.reject(new Error("rejected"));
		const s = document.createElement("script");
		s.textContent = "1";
		document.body.append(s);
	})()`, nil)
	want := []string{"console error", "thrown later", "rejected", "Content-Security-Policy: "}
	deadline := time.Now().Add(5 * time.Second)
	for {
		errs := strings.Join(p.Errors(), "\n")
		missing := slices.DeleteFunc(slices.Clone(want), func(w string) bool { return strings.Contains(errs, w) })
		if len(missing) == 0 {
			if strings.Contains(errs, "just saying") {
				t.Errorf("console.log counted as an error:\n%s", errs)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("errors %s\nmissing %q", errs, missing)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
