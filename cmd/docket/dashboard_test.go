package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/web/webtest"
)

// The dashboard in a real headless Chromium against `docket serve` with no
// configuration: a bad key is refused with a readable message; the printed
// key connects; a text file uploaded through the page's file input shows up
// as a job that reaches completed 100% live (from the event stream), then
// in the documents table with its title and language, and a search from the
// page's search box finds it; a refused upload (an image, 415) says why;
// after a reload the key is remembered and the finished job still listed.
// Skipped without Chromium unless DOCKET_REQUIRE_BROWSER=1.
func TestDashboard_Browser(t *testing.T) {
	b := webtest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0"},
			env(map[string]string{"DOCKET_DATA_DIR": t.TempDir()}), &stdout, &stderr)
	}()
	// A cleanup, not a defer: it runs after the page's failure screenshot.
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v\n%s", err, stderr.String())
		}
	})
	srv := readBanner(t, stdout.String, stderr.String)
	if srv.key == "" {
		t.Fatalf("no api_key line on first start:\n%s", stdout.String())
	}
	dir := t.TempDir()
	report := writeFile(t, dir, "report.txt", "Quarterly report of the lighthouse keepers.\n\n"+
		"The lighthouse on the northern cape was repaired in March 2026 for EUR 12,500. "+
		"The keepers thank the harbour office for its help with the new lamp.")
	image := writeFile(t, dir, "photo.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01")

	p := b.NewPage(t)
	p.Navigate(srv.base + "/")
	if got := p.Text("h1"); got != "Docket" {
		t.Fatalf("heading %q, want Docket", got)
	}

	// A wrong key: the page says so, and shows no data.
	p.Type("#key", "dk_not_a_real_key")
	p.Click("#keyform button")
	p.WaitFor(`"invalid API key" in the status`, `document.querySelector("#conn").textContent.includes("invalid API key")`, 10*time.Second)

	// The printed key connects.
	p.Type("#key", srv.key)
	p.Click("#keyform button")
	p.WaitFor(`the status "live"`, `document.querySelector("#conn").textContent === "live"`, 10*time.Second)
	p.WaitFor("the rate limit line", `/\d+ of \d+ uploads left/.test(document.querySelector("#ratelimit").textContent)`, 10*time.Second)

	dashboardUpload(t, p, srv, report)
	dashboardSearch(t, p)

	// A refused upload says why.
	p.SetFiles("#file", image)
	p.Click("#uploadform button")
	p.WaitFor("the 415 message", `document.querySelector("#uploadmsg").textContent.startsWith("photo.png: unsupported file type")`, 10*time.Second)

	// A reload remembers the key and lists the finished job again.
	p.Navigate(srv.base + "/")
	p.WaitFor(`the status "live" after a reload`, `document.querySelector("#conn").textContent === "live"`, 10*time.Second)
	p.WaitFor("the finished job after a reload", `[...document.querySelectorAll("#jobrows tr")].some((tr) => tr.cells[2].textContent === "completed")`, 10*time.Second)
	p.WaitFor("the document after a reload", `[...document.querySelectorAll("#docrows tr")].some((tr) => tr.cells[0].textContent === "report.txt")`, 10*time.Second)

	if ex := p.Exceptions(); len(ex) > 0 {
		t.Errorf("the page threw:\n%s", strings.Join(ex, "\n"))
	}
	for _, line := range p.Console() {
		if strings.Contains(line, "Content Security Policy") {
			t.Errorf("CSP violation: %s", line)
		}
	}
}

// dashboardUpload uploads report through the page and follows its job to
// completed 100% and its document into the documents table.
func dashboardUpload(t *testing.T, p *webtest.Page, srv server, report string) {
	t.Helper()
	// Record every state the job row goes through, to show it moved live.
	p.Eval(`(() => {
		window.seen = [];
		const note = () => {
			for (const tr of document.querySelectorAll("#jobrows tr")) {
				const s = [...tr.cells].slice(2, 5).map((td) => td.textContent.trim()).join(" ");
				if (window.seen[window.seen.length - 1] !== s) window.seen.push(s);
			}
		};
		new MutationObserver(note).observe(document.querySelector("#jobrows"), {childList: true, subtree: true, characterData: true});
	})()`, nil)
	p.SetFiles("#file", report)
	p.Click("#uploadform button")
	p.WaitFor("the upload message", `/^report\.txt: queued as job \d+$/.test(document.querySelector("#uploadmsg").textContent)`, 10*time.Second)
	p.WaitFor("the job to complete at 100%", `[...document.querySelectorAll("#jobrows tr")].some((tr) =>
		tr.cells[2].textContent === "completed" && tr.cells[3].textContent === "completed" && tr.cells[4].textContent.trim() === "100%")`, 60*time.Second)
	var seen []string
	p.Eval(`window.seen`, &seen)
	t.Logf("job row states: %q", seen)
	// Only the event stream updates a shown job (the page lists jobs only
	// when it connects), so a row that changed after the upload changed live.
	if len(seen) < 2 || strings.HasPrefix(seen[0], "completed") {
		t.Errorf("job row states %q, want the row to appear unfinished and then change live", seen)
	}

	var docs struct {
		Documents []struct {
			Filename string
			Fields   struct{ Title, Language string }
		}
	}
	getJSON(t, srv, "/v1/documents", &docs)
	if len(docs.Documents) != 1 || docs.Documents[0].Fields.Title == "" || docs.Documents[0].Fields.Language == "" {
		t.Fatalf("documents: %+v, want report.txt with a title and a language", docs)
	}
	want := docs.Documents[0]
	p.WaitFor("the document row with its title and language", `[...document.querySelectorAll("#docrows tr")].some((tr) =>
		tr.cells[0].textContent === "report.txt" && tr.cells[1].textContent === "completed" &&
		tr.cells[2].textContent === `+jsQuote(want.Fields.Title)+` && tr.cells[3].textContent === `+jsQuote(want.Fields.Language)+`)`, 10*time.Second)
}

// dashboardSearch searches from the page's search box.
func dashboardSearch(t *testing.T, p *webtest.Page) {
	t.Helper()
	p.Type("#q", "lighthouse repaired")
	p.Click("#searchform button")
	p.WaitFor("a search result", `[...document.querySelectorAll("#results li")].some((li) => li.textContent.includes("lighthouse on the northern cape"))`, 10*time.Second)
	if got := p.Text("#results li"); !strings.Contains(got, "report.txt") {
		t.Errorf("first search result %q does not name report.txt", got)
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// jsQuote quotes s as a JavaScript string literal.
func jsQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
