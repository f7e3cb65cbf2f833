package web_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/pipeline"
	"github.com/docketq/docket/pipeline/extract/extracttest"
)

// harbourPDF is a real two-page PDF with a title, a date and an amount.
func harbourPDF() []byte {
	return extracttest.PDF{Title: "Harbour survey", Pages: []extracttest.PDFPage{
		{Text: extracttest.Lines(72, 720, 14, "The harbour survey counted seventeen lighthouses.", "Each lighthouse keeper filed a report on 12 March 2026.")},
		{Text: extracttest.Lines(72, 720, 14, "Storm damage to the northern pier was repaired in May for EUR 12,500.")},
	}}.Bytes()
}

// Early results appear on a document's card before it completes, pushed
// over the event stream: while its job waits on the embedding service, the
// page and word counts, title, language and chunk count; while it waits to
// save its results, the key phrases, dates and amounts. The document has
// no fields all along. Once it completes, the card keeps them all.
func TestDashboard_EarlyResults(t *testing.T) {
	t.Parallel()
	e := setup(t, 1, 0)
	e.embed.hold()
	e.saves.holdAfter(1) // its one chunk's batch is saved; its results wait
	doc, job := e.upload("harbour.pdf", harbourPDF())
	results := card("harbour.pdf") + `?.querySelector(".results")`
	has := func(parts ...string) string {
		var conds []string
		for _, p := range parts {
			conds = append(conds, results+`?.textContent.includes(`+jsQuote(p)+`)`)
		}
		return strings.Join(conds, " && ")
	}
	running := func(when string) {
		t.Helper()
		var d httpapi.DocumentView
		e.get("/v1/documents/"+doc.ID, &d)
		var j httpapi.JobView
		e.get("/v1/jobs/"+job.ID, &j)
		if d.Status != "processing" || d.Fields != nil || j.Status != "processing" {
			t.Fatalf("%s: document %s with fields %+v, job %s: want both processing, no fields yet", when, d.Status, d.Fields, j.Status)
		}
		var early pipeline.Early
		if err := json.Unmarshal(j.PartialResult, &early); err != nil || early.PageCount != 2 {
			t.Fatalf("%s: the job's partial_result %s (%v): want the early results", when, j.PartialResult, err)
		}
		if got := e.cardText("harbour.pdf", ".badge"); got != "Processing…" {
			t.Fatalf("%s: the card says %q, want Processing…", when, got)
		}
	}

	e.page.WaitFor("the parse's early results while embedding", card("harbour.pdf")+`?.querySelector(".stepper li.current")?.dataset.stage === "embedding" && `+
		has("Pages2", "TitleHarbour survey", "Languageen", "Words", "Chunks"), wait)
	running("held in embedding")
	if got := e.cardText("harbour.pdf", ".results"); strings.Contains(got, "Key phrases") || strings.Contains(got, "Amounts") {
		t.Errorf("analysis results %q before the analysis", got)
	}
	var early string
	e.page.Eval(results+`.dataset.early`, &early)
	if early != "true" {
		t.Errorf("results marked early=%q while processing, want true", early)
	}

	e.embed.open()
	select {
	case <-e.saves.waiting:
	case <-time.After(wait):
		t.Fatal("the job never reached its save")
	}
	e.page.WaitFor("the analysis's early results before completion", has("Key phrases", "storm damage", "Dates2026-03-12", "Amounts12500 EUR"), wait)
	running("held before its save")
	e.screenshot("dashboard-early")
	e.checkAxe("early results")

	e.saves.open()
	e.page.WaitFor("harbour.pdf completed, its results kept", card("harbour.pdf")+`?.dataset.status === "completed" && `+results+`.dataset.early === "false" && `+
		has("Pages2", "TitleHarbour survey", "Languageen", "Key phrases", "Dates2026-03-12", "Amounts12500 EUR"), wait)
	var j httpapi.JobView
	e.get("/v1/jobs/"+job.ID, &j)
	if j.Status != "completed" || !strings.Contains(string(j.PartialResult), "key_phrases") {
		t.Errorf("completed job %s keeps partial_result %s, want the last early results", j.Status, j.PartialResult)
	}
	e.noPageErrors()
}
