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
	t.Parallel()
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

	// A refused upload says why, on its own row.
	p.SetFiles("#file", image)
	p.WaitFor("the 415 message", `[...document.querySelectorAll("#uploads li")].some((li) =>
		li.querySelector(".fname").textContent === "photo.png" && li.querySelector(".note").textContent.startsWith("unsupported file type"))`, 10*time.Second)

	// A reload remembers the key and shows the finished document again.
	p.Navigate(srv.base + "/")
	p.WaitFor(`the status "live" after a reload`, `document.querySelector("#conn").textContent === "live"`, 10*time.Second)
	p.WaitFor("the finished document after a reload", reportCard+`?.dataset.status === "completed"`, 10*time.Second)

	if ex := p.Exceptions(); len(ex) > 0 {
		t.Errorf("the page threw:\n%s", strings.Join(ex, "\n"))
	}
	for _, line := range p.Console() {
		if strings.Contains(line, "Content Security Policy") {
			t.Errorf("CSP violation: %s", line)
		}
	}
}

// reportCard is a JavaScript expression for the card of report.txt.
const reportCard = `[...document.querySelectorAll("#doclist li.doc")].find((li) => li.querySelector(".doc-name").textContent === "report.txt")`

// dashboardUpload uploads report through the page's file input and follows
// its card to completed 100% with its title and language.
func dashboardUpload(t *testing.T, p *webtest.Page, srv server, report string) {
	t.Helper()
	// Record every state the card goes through, to show it moved live.
	p.Eval(`(() => {
		window.seen = [];
		const note = () => {
			for (const li of document.querySelectorAll("#doclist li.doc")) {
				const s = li.dataset.status + " " + li.querySelector(".pct").textContent;
				if (window.seen[window.seen.length - 1] !== s) window.seen.push(s);
			}
		};
		new MutationObserver(note).observe(document.querySelector("#doclist"), {childList: true, subtree: true, characterData: true, attributes: true});
	})()`, nil)
	p.SetFiles("#file", report)
	p.WaitFor("the upload bar", `[...document.querySelectorAll("#uploads li")].some((li) =>
		li.querySelector(".fname").textContent === "report.txt" && li.querySelector(".note").textContent === "uploaded")`, 10*time.Second)
	p.WaitFor("the document to complete at 100%", reportCard+`?.dataset.status === "completed" && `+reportCard+`.querySelector(".pct").textContent === "100 %"`, 60*time.Second)
	var seen []string
	p.Eval(`window.seen`, &seen)
	t.Logf("card states: %q", seen)
	// The card appears when the upload is answered, before any work.
	if len(seen) < 2 || strings.HasPrefix(seen[0], "completed") {
		t.Errorf("card states %q, want the card to appear unfinished and then change live", seen)
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
	p.WaitFor("the card with its title and language", reportCard+`.querySelector(".results").textContent.includes(`+
		jsQuote("Title"+want.Fields.Title)+`) && `+reportCard+`.querySelector(".results").textContent.includes(`+jsQuote("Language"+want.Fields.Language)+`)`, 10*time.Second)
}

// dashboardSearch searches from the page's search box.
func dashboardSearch(t *testing.T, p *webtest.Page) {
	t.Helper()
	p.Type("#q", "lighthouse repaired")
	// Enter, not a click on the button: the document's card above the form
	// may still grow as its results arrive, and a click aimed at where the
	// button was missed it once under a loaded CI run (no search started).
	p.Press("\r")
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
