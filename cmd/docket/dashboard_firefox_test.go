package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/pipeline/extract/extracttest"
	"github.com/docketq/docket/web/webtest/firefox"
)

// pipelineWait bounds the wait for an uploaded PDF to be processed. On a
// machine whose compilation cache is empty, the first parse compiles the PDF
// engine's WebAssembly module: on a loaded 2-core box (CI beside other test
// packages) that alone took over a minute, the job at "parsing 5 %" when a
// one-minute wait ran out. A poll with a deadline: a run that passes does not
// wait it out.
const pipelineWait = 3 * time.Minute

// The dashboard in a real headless Firefox (Debian's firefox-esr, over
// WebDriver BiDi) against `docket serve` with no configuration, as
// TestDashboard_Browser does in Chromium: the tenant view loads without a
// console error; the printed key, typed once, is kept in sessionStorage
// (not in a URL, localStorage or a cookie) and connects; a real PDF chosen
// through the page's file input reaches completed 100 % over the event
// stream; the operator console, opened in a second tab with the admin key,
// shows the finished job without a reload; a reload of the tenant view
// keeps the key. Neither page logs an error. Skipped without Firefox
// unless DOCKET_REQUIRE_BROWSER=1.
func TestDashboard_Firefox(t *testing.T) {
	t.Parallel()
	b := firefox.Start(t)
	dataDir := t.TempDir()
	srv, _, _, _ := startServe(t, dataDir)
	if srv.key == "" {
		t.Fatal("no api_key line on first start")
	}
	adminKey, err := os.ReadFile(filepath.Join(dataDir, "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	pdf := writeFile(t, t.TempDir(), "survey.pdf", string(extracttest.PDF{Title: "Harbour survey", Pages: []extracttest.PDFPage{
		{Text: extracttest.Lines(72, 720, 14, "The harbour survey counted seventeen lighthouses in March 2026.")},
		{Text: extracttest.Lines(72, 720, 14, "Storm damage to the northern pier was repaired in May for EUR 12,500.")},
	}}.Bytes()))

	p := b.NewPage(t)
	p.Navigate(srv.base + "/")
	p.WaitFor("the page's module to run", `document.querySelector("#conn").textContent === "not connected"`, 10*time.Second)
	firefoxConnect(t, p, srv)

	// The console, open before the upload: what follows must reach it live.
	c := b.NewPage(t)
	c.Navigate(srv.base + "/ui/admin.html")
	c.Type("#adminkey", strings.TrimSpace(string(adminKey)))
	c.Click(`#adminform button[type=submit]`)
	c.WaitFor("the console live", `document.querySelector("#conn").dataset.state === "live"`, 20*time.Second)
	c.WaitFor("the first tenant and the database health", `document.querySelector("#tenants tr[data-tenant]") &&
		document.querySelector("#dbhealth dt")`, 20*time.Second)
	c.Eval(`window.notReloaded = true`, nil)

	firefoxUpload(t, p, pdf)

	c.WaitFor("the completed job in the console, live", `window.notReloaded && document.querySelector("#conn").dataset.state === "live" &&
		[...document.querySelectorAll("#states tr")].some((tr) => tr.cells[1].textContent === "completed" && tr.cells[2].textContent === "1") &&
		document.querySelector("#throughput rect.ok")`, pipelineWait)

	// A reload keeps the key (sessionStorage) and shows the document again.
	p.Reload()
	p.WaitFor(`the status "live" after a reload`, `document.querySelector("#conn").textContent === "live"`, 20*time.Second)
	p.WaitFor("the finished document after a reload", surveyCard+`?.dataset.status === "completed"`, 20*time.Second)
	firefoxKeyKept(t, p, srv.key)

	for name, page := range map[string]*firefox.Page{"tenant view": p, "console": c} {
		if errs := page.Errors(); len(errs) > 0 {
			t.Errorf("the %s logged errors:\n%s", name, strings.Join(errs, "\n"))
		}
	}
}

// surveyCard is a JavaScript expression for the card of survey.pdf.
const surveyCard = `[...document.querySelectorAll("#doclist li.doc")].find((li) => li.querySelector(".doc-name").textContent === "survey.pdf")`

// firefoxConnect types the key once and sees it connect and kept.
func firefoxConnect(t *testing.T, p *firefox.Page, srv server) {
	t.Helper()
	if errs := p.Errors(); len(errs) > 0 {
		t.Errorf("the tenant view logged errors on load:\n%s", strings.Join(errs, "\n"))
	}
	p.Type("#key", srv.key)
	p.Click("#keyform button[type=submit]")
	// Well before serve's first keep-alive (15 s): with nothing to send,
	// the stream must still open at once (Firefox's fetch resolves only at
	// the first bytes of the body).
	p.WaitFor(`the status "live"`, `document.querySelector("#conn").textContent === "live"`, 10*time.Second)
	p.WaitFor("the rate limit line", `/\d+ of \d+ uploads left/.test(document.querySelector("#ratelimit").textContent)`, 20*time.Second)
	firefoxKeyKept(t, p, srv.key)
}

// firefoxKeyKept checks that the key is in sessionStorage and nowhere a
// URL, localStorage or a cookie would carry it: not in the page's address
// or any address it requested.
func firefoxKeyKept(t *testing.T, p *firefox.Page, key string) {
	t.Helper()
	var got struct {
		Session, Href string
		Local         int
		Cookie        string
		URLs          []string
	}
	p.Eval(`({Session: sessionStorage.getItem("docket_key"), Href: location.href, Local: localStorage.length,
		Cookie: document.cookie, URLs: performance.getEntriesByType("resource").map((e) => e.name)})`, &got)
	if got.Session != key {
		t.Errorf("sessionStorage docket_key %q, want the key", got.Session)
	}
	if got.Local != 0 || got.Cookie != "" {
		t.Errorf("localStorage holds %d items, cookies %q: want none", got.Local, got.Cookie)
	}
	for _, u := range append(got.URLs, got.Href) {
		if strings.Contains(u, key) {
			t.Errorf("the key is in a URL: %s", u)
		}
	}
}

// firefoxUpload chooses the PDF in the page's file input and follows its
// card to completed 100 %, changing live.
func firefoxUpload(t *testing.T, p *firefox.Page, pdf string) {
	t.Helper()
	p.Eval(`(() => {
		window.seen = [];
		const note = () => {
			for (const li of document.querySelectorAll("#doclist li.doc")) {
				const cur = li.querySelector(".stepper li.current");
				const s = (cur ? cur.dataset.stage : li.dataset.status) + " " + li.querySelector(".pct").textContent;
				if (window.seen[window.seen.length - 1] !== s) window.seen.push(s);
			}
		};
		new MutationObserver(note).observe(document.querySelector("#doclist"), {childList: true, subtree: true, characterData: true, attributes: true});
	})()`, nil)
	p.SetFiles("#file", pdf)
	p.WaitFor("the upload bar at 100 %", `[...document.querySelectorAll("#uploads li")].some((li) => li.querySelector(".fname").textContent === "survey.pdf" &&
		li.querySelector("[role=progressbar]").getAttribute("aria-valuenow") === "100" && li.querySelector(".note").textContent === "uploaded")`, 20*time.Second)
	// The card learns of the job's progress from the event stream only
	// (the status says "live" while it is open).
	p.WaitFor("the document to complete at 100 %", surveyCard+`?.dataset.status === "completed" && `+
		surveyCard+`.querySelector(".pct").textContent === "100 %" && document.querySelector("#conn").textContent === "live"`, pipelineWait)
	var seen []string
	p.Eval(`window.seen`, &seen)
	t.Logf("card states: %q", seen)
	if len(seen) < 2 || strings.HasPrefix(seen[0], "completed") {
		t.Errorf("card states %q, want the card to appear unfinished and then change live", seen)
	}
	p.WaitFor("the PDF's page count and title", surveyCard+`.querySelector(".results").textContent.includes("Pages2") && `+
		surveyCard+`.querySelector(".results").textContent.includes("Title")`, 20*time.Second)
}
