package web_test

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/docketq/docket/httpapi"
)

// cardNames is a JavaScript expression for the names of the cards, top to
// bottom.
const cardNames = `[...document.querySelectorAll("#doclist li.doc")].map((li) => li.querySelector(".doc-name").textContent)`

// The cards are in the same order live and after a reload: the documents
// waiting or being processed first, then the ended ones, newest upload
// first within each; the Search box is above the list. A document that
// waited its turn says it took the time its attempt ran (started_at to
// completed_at), not the wait before it, live and after a reload.
func TestDashboard_OrderAndTook(t *testing.T) {
	t.Parallel()
	e := setup(t, 1, 0)
	for i := 1; i <= 3; i++ {
		e.upload(fmt.Sprintf("done-%d.txt", i), memo(i))
	}
	for i := 1; i <= 3; i++ {
		e.page.WaitFor(fmt.Sprintf("done-%d completed", i), card(fmt.Sprintf("done-%d.txt", i))+`?.dataset.status === "completed"`, wait)
	}
	e.embed.hold()
	e.upload("running.txt", memo(4))
	e.page.WaitFor("running.txt held in embedding", card("running.txt")+`?.querySelector(".stepper li.current")?.dataset.stage === "embedding"`, wait)
	_, waiting := e.upload("waiting.txt", memo(5))
	// Long enough a wait that it shows in the time taken if counted.
	e.page.WaitFor("waiting.txt waiting for 3 s", `(() => {
		const m = /^elapsed (\d+):(\d\d)$/.exec(`+card("waiting.txt")+`?.querySelector(".elapsed").textContent || "");
		return m && m[1] * 60 + Number(m[2]) >= 3; })()`, wait)

	want := []string{"waiting.txt", "running.txt", "done-3.txt", "done-2.txt", "done-1.txt"}
	order := func(when string) {
		t.Helper()
		var got []string
		e.page.Eval(cardNames, &got)
		if !slices.Equal(got, want) {
			t.Errorf("cards %s %q, want %q", when, got, want)
		}
	}
	order("live")
	// The event stream tells of the active documents (and of no other:
	// no replay, as in a new tab) before the listing of them all answers.
	release := e.holdListing()
	e.page.Eval(`sessionStorage.removeItem("docket_last_event")`, nil)
	e.page.Reload()
	e.page.WaitFor(`the status "live" after a reload`, `document.querySelector("#conn").textContent === "live"`, 10*time.Second)
	e.page.WaitFor("the active documents from the event stream", `!!(`+card("running.txt")+` && `+card("waiting.txt")+`)`, 10*time.Second)
	release()
	loaded := card("waiting.txt") + `?.querySelector(".ahead").textContent === "next in line" && ` +
		card("running.txt") + `?.dataset.status === "processing"`
	for i := 1; i <= 3; i++ {
		loaded += ` && ` + card(fmt.Sprintf("done-%d.txt", i)) + `?.querySelector(".elapsed").textContent.startsWith("took ")`
	}
	e.page.WaitFor("every card with its job after a reload", loaded, 10*time.Second)
	order("after a reload")
	var above bool
	e.page.Eval(`document.querySelector("#searchform").getBoundingClientRect().bottom <= document.querySelector("#doclist").getBoundingClientRect().top`, &above)
	if !above {
		t.Error("the Search box is not above the document list")
	}

	e.embed.open()
	e.page.WaitFor("waiting.txt completed", card("waiting.txt")+`?.dataset.status === "completed"`, wait)
	var j httpapi.JobView
	e.get("/v1/jobs/"+waiting.ID, &j)
	if j.StartedAt == nil || j.CompletedAt == nil {
		t.Fatalf("completed job %+v without its attempt's start and end", j)
	}
	took := "took " + clock(*j.StartedAt, *j.CompletedAt)
	if queued := "took " + clock(j.CreatedAt, *j.CompletedAt); queued == took {
		t.Fatalf("the job ran %s, as long as since it was queued: the test needs a wait", took)
	}
	for _, when := range []string{"live", "after a reload"} {
		if when != "live" {
			e.page.Reload()
		}
		e.page.WaitFor(`waiting.txt's time taken `+when, card("waiting.txt")+`?.querySelector(".elapsed").textContent === `+jsQuote(took), 10*time.Second)
	}
	order("once all ended")
	e.noPageErrors()
}

// clock formats the time from start to end as the page does: JavaScript
// dates (whole milliseconds) subtracted, rounded to seconds, as m:ss or
// h:mm:ss (dom.js clock).
func clock(start, end time.Time) string {
	ms := end.UnixMilli() - start.UnixMilli()
	secs := int(math.Round(float64(ms) / 1000))
	h, m, s := secs/3600, secs%3600/60, secs%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}
