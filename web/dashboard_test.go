package web_test

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/pipeline/extract/extracttest"
	"github.com/docketq/docket/web/webtest"
)

// surveyPDF is a real two-page PDF with a title and words to find.
func surveyPDF() []byte {
	return extracttest.PDF{Title: "Harbour survey", Pages: []extracttest.PDFPage{
		{Text: extracttest.Lines(72, 720, 14, "The harbour survey counted seventeen lighthouses in March 2026.", "Each lighthouse keeper filed a report.")},
		{Text: extracttest.Lines(72, 720, 14, "Storm damage to the northern pier was repaired in May for EUR 12,500.")},
	}}.Bytes()
}

func memo(n int) []byte {
	return fmt.Appendf(nil, "Memo %d\n\nThe keepers of lighthouse %d report calm seas and a working lamp.\n", n, n)
}

// observe records, for every document card, each distinct "stage percent"
// and "queue text | estimate" it shows, as the page changes.
const observe = `(() => {
	window.seen = {}; window.waits = {};
	const note = (store, name, s) => { const a = (store[name] ||= []); if (a[a.length - 1] !== s) a.push(s); };
	const look = () => {
		for (const li of document.querySelectorAll("#doclist li.doc")) {
			const name = li.querySelector(".doc-name").textContent;
			const cur = li.querySelector(".stepper li.current, .stepper li.failed");
			note(window.seen, name, (cur ? cur.dataset.stage : li.dataset.status) + " " + li.querySelector(".pct").textContent);
			if (li.dataset.status === "pending") note(window.waits, name, li.querySelector(".ahead").textContent + " | " + li.querySelector(".eta").textContent);
		}
	};
	new MutationObserver(look).observe(document.querySelector("#doclist"), {subtree: true, childList: true, characterData: true, attributes: true});
	look();
})()`

// checkAxe fails the test on serious or critical accessibility violations
// of the tenant's dashboard.
func (e *env) checkAxe(view string) {
	e.t.Helper()
	checkAxeOn(e.t, e.page, view)
}

func checkAxeOn(t *testing.T, p *webtest.Page, view string) {
	t.Helper()
	all := p.Axe()
	for _, v := range all {
		t.Logf("axe %s (%s): %s", webtest.AxeVersion, view, v)
	}
	bad := webtest.Serious(all)
	t.Logf("axe-core %s on the %s view: %d violations, %d serious or critical", webtest.AxeVersion, view, len(all), len(bad))
	if len(bad) > 0 {
		t.Errorf("%s: %d serious accessibility violations", view, len(bad))
	}
}

// A real PDF and a Markdown file dropped on the zone together: each gets
// an upload bar that reaches 100 %; the PDF's card steps through the
// stages live, shows its page count and title while it is still being
// indexed (early results), and reaches completed 100 % with its title and
// language.
func TestDashboard_UploadPDF(t *testing.T) {
	t.Parallel()
	e := setup(t, 1, 0)
	e.embed.hold()
	pdf := writeFile(t, "survey.pdf", surveyPDF())
	md := writeFile(t, "notes.md", []byte("# Harbour notes\n\nThe pier needs new planks before winter.\n"))
	e.page.Eval(observe, nil)
	e.page.DropFiles("#dropzone", pdf, md)
	e.page.WaitFor("both upload bars at 100 %", `[...document.querySelectorAll("#uploads li")].filter((li) =>
		li.querySelector("[role=progressbar]").getAttribute("aria-valuenow") === "100" && li.querySelector(".note").textContent === "uploaded").length === 2`, wait)

	e.page.WaitFor("survey.pdf held in embedding", card("survey.pdf")+`?.querySelector(".stepper li.current")?.dataset.stage === "embedding"`, wait)
	if got := e.cardText("survey.pdf", ".results"); !strings.Contains(got, "Pages2") || !strings.Contains(got, "TitleHarbour survey") ||
		strings.Contains(got, "Key phrases") {
		t.Errorf("early results while embedding %q: want the page count and title, no key phrases yet", got)
	}
	if got := e.cardText("notes.md", ".ahead"); got != "next in line" {
		t.Errorf("notes.md waits with %q, want next in line", got)
	}
	e.screenshot("dashboard-processing")
	e.checkAxe("processing")

	e.embed.open()
	e.page.WaitFor("survey.pdf completed at 100 %", card("survey.pdf")+`?.dataset.status === "completed" && `+card("survey.pdf")+`.querySelector(".pct").textContent === "100 %"`, wait)
	var docs struct{ Documents []httpapi.DocumentView }
	e.get("/v1/documents", &docs)
	var title, lang string
	for _, d := range docs.Documents {
		if d.Filename == "survey.pdf" && d.Fields != nil {
			title, lang = d.Fields.Title, d.Fields.Language
		}
	}
	if title == "" || lang == "" {
		t.Fatalf("documents %+v: want survey.pdf with a title and a language", docs.Documents)
	}
	e.page.WaitFor("the title and language", card("survey.pdf")+`.querySelector(".results").textContent.includes(`+jsQuote("Title"+title)+`) && `+
		card("survey.pdf")+`.querySelector(".results").textContent.includes(`+jsQuote("Language"+lang)+`)`, 10*time.Second)
	var done int
	e.page.Eval(card("survey.pdf")+`.querySelectorAll(".stepper li.done").length`, &done)
	if done != 7 {
		t.Errorf("%d of 7 stages marked done", done)
	}
	var seen []string
	e.page.Eval(`window.seen["survey.pdf"]`, &seen)
	t.Logf("survey.pdf went through %q", seen)
	checkStages(t, seen)
	// notes.md's fields too, so that the cards stand still for the clicks below.
	e.page.WaitFor("notes.md completed with its title", card("notes.md")+`?.dataset.status === "completed" && `+
		card("notes.md")+`.querySelector(".results").textContent.includes("Title")`, wait)

	// The card lists the document's chunks with their pages.
	e.page.Click(fmt.Sprintf(`#doclist li.doc[data-id=%q] .chunks summary`, surveyID(e)))
	e.page.WaitFor("the chunks with their pages", card("survey.pdf")+`.querySelector(".chunklist li")?.textContent.startsWith("page") &&
		`+card("survey.pdf")+`.querySelector(".chunklist").textContent.includes("seventeen lighthouses")`, 10*time.Second)

	// Search names the file and pages and marks the words that matched.
	e.page.Type("#q", "storm damage")
	e.page.Click("#searchform button")
	e.page.WaitFor("a search hit with the match marked", `[...document.querySelectorAll("#results li")].some((li) =>
		li.textContent.includes("survey.pdf · page") && [...li.querySelectorAll("mark")].map((m) => m.textContent.toLowerCase()).includes("storm"))`, 10*time.Second)
	e.screenshot("dashboard")
	e.checkAxe("completed")

	// On a phone's screen nothing is wider than the screen.
	e.page.Viewport(390, 844, true)
	var fits bool
	e.page.Eval(`document.documentElement.scrollWidth <= window.innerWidth`, &fits)
	if !fits {
		t.Error("the page is wider than a phone's screen")
	}
	e.screenshot("dashboard-phone")
	e.checkAxe("phone")
	e.noPageErrors()
}

// Cancel stops a waiting document before it runs and a running one in the
// middle; both then offer Retry.
func TestDashboard_Cancel(t *testing.T) {
	t.Parallel()
	e := setup(t, 1, 0)
	e.embed.hold()
	e.upload("running.txt", memo(1))
	e.upload("waiting.txt", memo(2))
	e.page.WaitFor("running.txt held in embedding", card("running.txt")+`?.querySelector(".stepper li.current")?.dataset.stage === "embedding"`, wait)
	e.page.WaitFor("waiting.txt next in line", card("waiting.txt")+`?.querySelector(".ahead").textContent === "next in line"`, wait)
	for _, name := range []string{"waiting.txt", "running.txt"} {
		var id string
		e.page.Eval(card(name)+`.dataset.id`, &id)
		e.page.Click(fmt.Sprintf(`#doclist li.doc[data-id=%q] button.cancel`, id))
		e.page.WaitFor(name+" cancelled", card(name)+`?.dataset.status === "cancelled" && !`+card(name)+`.querySelector("button.retry").hidden && `+
			card(name)+`.querySelector("button.cancel").hidden`, wait)
	}
	var jobs struct{ Jobs []httpapi.JobView }
	e.get("/v1/jobs", &jobs)
	for _, j := range jobs.Jobs {
		if j.Status != "cancelled" {
			t.Errorf("job %s is %s, want cancelled", j.ID, j.Status)
		}
	}
	e.noPageErrors()
}

func surveyID(e *env) string {
	var id string
	e.page.Eval(card("survey.pdf")+`.dataset.id`, &id)
	return id
}

// checkStages checks that the card's stages only moved forward, that it
// showed the document being worked on, and that it ended at 100 %.
func checkStages(t *testing.T, seen []string) {
	t.Helper()
	order := []string{"queued", "downloading", "parsing", "chunking", "embedding", "analyzing", "completed"}
	last := -1
	for _, s := range seen {
		at := slices.Index(order, strings.Fields(s)[0])
		if at < last {
			t.Errorf("stages %q went back", seen)
		}
		last = max(last, at)
	}
	if len(seen) < 3 || !slices.Contains(seen, "embedding 65 %") || seen[len(seen)-1] != "completed 100 %" {
		t.Errorf("stages %q: want several, embedding among them, ending at completed 100 %%", seen)
	}
}

// With one document at a time, the fourth of four waits behind three and
// its card counts down: 2 documents ahead, 1, next in line; its estimate
// says "estimating…" until a document has completed, then never counts up.
func TestDashboard_QueuePosition(t *testing.T) {
	t.Parallel()
	e := setup(t, 1, 0)
	e.embed.hold()
	e.page.Eval(observe, nil)
	for i := 1; i <= 4; i++ {
		e.upload(fmt.Sprintf("memo-%d.txt", i), memo(i))
	}
	e.page.WaitFor("memo-4 two documents ahead", card("memo-4.txt")+`?.querySelector(".ahead").textContent === "2 documents ahead"`, wait)
	if got := e.cardText("memo-4.txt", ".eta"); got != "estimating…" {
		t.Errorf("estimate before any document completed: %q, want estimating…", got)
	}
	// Each release lets one document through; memo-4's place is awaited
	// before the next, so that a loaded machine's late refresh cannot skip
	// one (it once went from "1 document ahead" straight to running).
	for i, next := range []string{"1 document ahead", "next in line", ""} {
		e.embed.release(t.Context())
		e.page.WaitFor(fmt.Sprintf("memo-%d completed", i+1), card(fmt.Sprintf("memo-%d.txt", i+1))+`?.dataset.status === "completed"`, wait)
		if next != "" {
			e.page.WaitFor("memo-4 "+next, card("memo-4.txt")+`?.querySelector(".ahead").textContent === `+jsQuote(next), wait)
		}
	}
	e.page.WaitFor("memo-4 running", card("memo-4.txt")+`?.dataset.status === "processing"`, wait)
	e.embed.release(t.Context())
	e.page.WaitFor("memo-4 completed", card("memo-4.txt")+`?.dataset.status === "completed"`, wait)

	var waits []string
	e.page.Eval(`window.waits["memo-4.txt"]`, &waits)
	t.Logf("memo-4 waited with %q", waits)
	var ahead []string
	var secs []int
	for _, w := range waits {
		a, eta, _ := strings.Cut(w, " | ")
		if len(ahead) == 0 || ahead[len(ahead)-1] != a {
			ahead = append(ahead, a)
		}
		if s, ok := etaSeconds(eta); ok {
			secs = append(secs, s)
		}
	}
	if want := []string{"2 documents ahead", "1 document ahead", "next in line"}; !slices.Equal(ahead, want) {
		t.Errorf("queue texts %q, want %q", ahead, want)
	}
	if len(secs) == 0 {
		t.Error("no estimate shown after documents completed")
	}
	for i := 1; i < len(secs); i++ {
		if secs[i] > secs[i-1] {
			t.Errorf("the estimate counted up: %v", secs)
		}
	}
	e.noPageErrors()
}

var etaRE = regexp.MustCompile(`(\d+) (s|min)\b`)

// etaSeconds reads a pending card's estimate ("starts in about 5 s",
// "starts any moment now": 0).
func etaSeconds(text string) (int, bool) {
	if strings.Contains(text, "any moment") {
		return 0, true
	}
	m := etaRE.FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	n, _ := strconv.Atoi(m[1])
	if m[2] == "min" {
		n *= 60
	}
	return n, true
}

// A document whose indexing the embedding service refused shows why in
// plain words, its stepper marks the stage it failed in (embedding), and
// it offers Retry; a password-protected PDF fails in parsing and offers no
// Retry (the same file fails the same way again). A reload shows both as
// they were. Once the service works again, Retry processes the first to
// the end, and the new job links to the failed one.
func TestDashboard_RetryFailed(t *testing.T) {
	t.Parallel()
	e := setup(t, 1, 0)
	e.embed.refuse(fmt.Errorf("%w: monthly quota used up", embedding.ErrQuotaExceeded))
	e.page.DropFiles("#dropzone", writeFile(t, "report.txt", memo(7)))
	e.page.WaitFor("report.txt failed", card("report.txt")+`?.dataset.status === "failed"`, wait)
	if got := e.cardText("report.txt", ".doc-error .why"); !strings.HasPrefix(got, "The embedding service failed") {
		t.Errorf("error shown %q, want it in plain words", got)
	}
	var id string
	e.page.Eval(card("report.txt")+`.dataset.id`, &id)
	retry := fmt.Sprintf(`#doclist li.doc[data-id=%q] button.retry`, id)
	e.page.DropFiles("#dropzone", writeFile(t, "locked.pdf", extracttest.PDF{Encrypt: true, Pages: extracttest.ProsePDF(1).Pages}.Bytes()))
	e.page.WaitFor("locked.pdf failed", card("locked.pdf")+`?.dataset.status === "failed"`, wait)
	failedAs := func(when string) {
		t.Helper()
		e.page.WaitFor("the Retry button "+when, `!document.querySelector(`+jsQuote(retry)+`).hidden`, 10*time.Second)
		e.page.WaitFor("report.txt failed in embedding "+when, card("report.txt")+`?.querySelector(".stepper li.failed")?.dataset.stage === "embedding"`, 10*time.Second)
		e.page.WaitFor("locked.pdf failed in parsing "+when, card("locked.pdf")+`?.querySelector(".stepper li.failed")?.dataset.stage === "parsing"`, 10*time.Second)
		if got := e.cardText("locked.pdf", ".doc-error .why"); !strings.Contains(got, "password-protected") {
			t.Errorf("locked.pdf's error %q %s, want it to say the file is password-protected", got, when)
		}
		var offered bool
		e.page.Eval(`!`+card("locked.pdf")+`.querySelector("button.retry").hidden`, &offered)
		if offered {
			t.Errorf("Retry offered for a password-protected PDF %s", when)
		}
	}
	failedAs("live")
	e.page.Reload()
	e.page.WaitFor(`the status "live" after a reload`, `document.querySelector("#conn").textContent === "live"`, 10*time.Second)
	failedAs("after a reload")
	e.screenshot("dashboard-failed")
	e.checkAxe("failed")

	e.embed.refuse(nil)
	e.page.Click(retry)
	e.page.WaitFor("report.txt completed after Retry", card("report.txt")+`?.dataset.status === "completed" && `+card("report.txt")+`.querySelector(".pct").textContent === "100 %"`, wait)
	if got := e.cardText("report.txt", ".doc-error .why"); got != "" {
		t.Errorf("error %q still shown after a successful retry", got)
	}
	var jobs struct{ Jobs []httpapi.JobView }
	e.get("/v1/jobs", &jobs)
	var retried, failed httpapi.JobView
	for _, j := range jobs.Jobs {
		switch {
		case j.RetryOf != nil:
			retried = j
		case j.DocumentID == id:
			failed = j
		}
	}
	if len(jobs.Jobs) != 3 || retried.RetryOf == nil || *retried.RetryOf != failed.ID || failed.Status != "failed" {
		t.Errorf("jobs %+v: want the failed one kept and a completed retry linking to it", jobs.Jobs)
	}
	e.noPageErrors()
}

// A tenant with three uploads an hour uploads one through the API, which
// the page counts at once (the server's count, not the page's own); it
// then drops three files: two go up, the third gets the 429 toast with a
// countdown that moves, the zone is disabled and says no uploads are left;
// a reload keeps all of it.
func TestDashboard_RateLimit(t *testing.T) {
	t.Parallel()
	e := setup(t, 4, 3)
	e.page.WaitFor("three uploads left", `document.querySelector("#ratelimit").textContent === "3 of 3 uploads left this hour"`, 10*time.Second)
	e.upload("elsewhere.txt", memo(9))
	e.page.WaitFor("two uploads left after an upload elsewhere", `document.querySelector("#ratelimit").textContent === "2 of 3 uploads left this hour"`, 10*time.Second)
	var paths []string
	for _, n := range []string{"a.txt", "b.txt", "c.txt"} {
		paths = append(paths, writeFile(t, n, memo(len(paths))))
	}
	e.page.DropFiles("#dropzone", paths...)
	limited := func(when string) {
		e.page.WaitFor("the limit toast "+when, `!document.querySelector("#limit").hidden &&
			document.querySelector("#limit").textContent.includes("Upload limit reached. Please try again later.")`, 10*time.Second)
		e.page.WaitFor("no uploads left "+when, `document.querySelector("#ratelimit").textContent === "0 of 3 uploads left this hour"`, 10*time.Second)
		var disabled bool
		e.page.Eval(`document.querySelector("#file").disabled && document.querySelector("#dropzone").classList.contains("disabled")`, &disabled)
		if !disabled {
			t.Errorf("the upload zone is open %s", when)
		}
		first := countdown(t, e.page.Text("#countdown"))
		if first < 3000 || first > 3600 {
			t.Errorf("countdown %d s %s, want the rest of the hour", first, when)
		}
		e.page.WaitFor("the countdown to move "+when, fmt.Sprintf(`(() => {
			const secs = document.querySelector("#countdown").textContent.split(":").reduce((a, n) => a * 60 + Number(n), 0);
			return secs < %d; })()`, first), 5*time.Second)
	}
	limited("after the 429")
	if got := e.page.Text("#uploads li:last-child .note"); got != "not sent: upload limit reached" {
		t.Errorf("c.txt's row says %q", got)
	}
	e.screenshot("dashboard-rate-limit")
	e.checkAxe("rate limited")

	e.page.Reload()
	e.page.WaitFor(`the status "live" after a reload`, `document.querySelector("#conn").textContent === "live"`, 10*time.Second)
	limited("after a reload")
	e.noPageErrors()
}

// countdown reads h:mm:ss or m:ss as seconds.
func countdown(t *testing.T, text string) int {
	t.Helper()
	secs := 0
	for _, part := range strings.Split(text, ":") {
		n, err := strconv.Atoi(part)
		if err != nil {
			t.Fatalf("countdown %q", text)
		}
		secs = secs*60 + n
	}
	return secs
}

// The server ends the event stream: the page reconnects at once with the
// Last-Event-ID it had and goes on showing progress; after a reload it
// resumes from the id it kept. It never holds more than one stream.
func TestDashboard_StreamResumes(t *testing.T) {
	t.Parallel()
	e := setup(t, 1, 0)
	e.embed.hold()
	e.upload("first.txt", memo(1))
	e.page.WaitFor("first.txt held in embedding", card("first.txt")+`?.querySelector(".stepper li.current")?.dataset.stage === "embedding"`, wait)
	lastID := func() string {
		var id string
		e.page.Eval(`sessionStorage.getItem("docket_last_event") || ""`, &id)
		return id
	}
	before := lastID()
	if before == "" {
		t.Fatal("no event id kept")
	}
	if n := e.dropStreams(); n != 1 {
		t.Fatalf("%d streams open, want 1", n)
	}
	resumed := func(after int, want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			resumes, open := e.streamRequests()
			if len(resumes) > after && open == 1 {
				if got := resumes[after]; got != want {
					t.Errorf("stream %d resumed from %q, want %q", after+1, got, want)
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no new stream within 10 s (requests %q, %d open)", resumes, open)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	resumed(1, before)
	e.page.WaitFor(`the status "live" again`, `document.querySelector("#conn").textContent === "live"`, 10*time.Second)

	e.embed.release(t.Context())
	e.page.WaitFor("first.txt completed after the drop", card("first.txt")+`?.dataset.status === "completed"`, wait)
	kept := lastID()
	if kept == before {
		t.Error("no event after the stream resumed")
	}
	e.page.Reload()
	e.page.WaitFor(`the status "live" after a reload`, `document.querySelector("#conn").textContent === "live"`, 10*time.Second)
	resumed(2, kept)
	e.page.WaitFor("first.txt still completed after the reload", card("first.txt")+`?.dataset.status === "completed"`, 10*time.Second)
	if resumes, open := e.streamRequests(); len(resumes) != 3 || open != 1 {
		t.Errorf("stream requests %q with %d open, want 3 and 1", resumes, open)
	}
	e.noPageErrors()
}
