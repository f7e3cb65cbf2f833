package web_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/web/webtest"
)

// consoleTraffic counts the operator console's requests to /v1/admin/ and
// lets a test end its event streams from the server's side.
type consoleTraffic struct {
	mu      sync.Mutex
	reads   int  // requests other than GET /v1/admin/events
	opened  int  // GET /v1/admin/events
	refuse  bool // answer GET /v1/admin/events 503, as a proxy without streaming would
	streams map[*http.Request]context.CancelFunc
}

func newConsoleTraffic() *consoleTraffic {
	return &consoleTraffic{streams: map[*http.Request]context.CancelFunc{}}
}

// watch serves /v1/admin/ through next, counting.
func (c *consoleTraffic) watch(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/admin/events" {
			c.mu.Lock()
			c.reads++
			c.mu.Unlock()
			next.ServeHTTP(w, r)
			return
		}
		c.mu.Lock()
		refuse := c.refuse
		c.mu.Unlock()
		if refuse {
			http.Error(w, "no streams here", http.StatusServiceUnavailable)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		r = r.WithContext(ctx)
		c.mu.Lock()
		c.opened++
		c.streams[r] = cancel
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			delete(c.streams, r)
			c.mu.Unlock()
			cancel()
		}()
		next.ServeHTTP(w, r)
	})
}

// counts returns the requests so far: reads and event streams opened.
func (c *consoleTraffic) counts() (reads, opened int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads, c.opened
}

// setRefuse makes GET /v1/admin/events fail (503) or work again.
func (c *consoleTraffic) setRefuse(refuse bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refuse = refuse
}

// drop ends the open event streams and returns how many it ended.
func (c *consoleTraffic) drop() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cancel := range c.streams {
		cancel()
	}
	return len(c.streams)
}

// openConsole opens the operator console in a new tab, connects it with
// the admin key and waits for its event stream to be live. The tab is
// marked, so that a test can tell it was never reloaded.
func openConsole(t *testing.T, e *env) *webtest.Page {
	t.Helper()
	p := e.b.NewPage(t)
	p.ReduceMotion()
	p.Navigate(e.url + "/ui/admin.html")
	p.Type("#adminkey", adminKey)
	p.Click("#adminform button[type=submit]")
	p.WaitFor("the console's stream live", `document.querySelector("#conn").dataset.state === "live"`, 10*time.Second)
	p.Eval(`window.__sameLoad = true`, nil)
	return p
}

// stateIs is a JavaScript condition: the queue health table shows n jobs
// in state (a missing row is 0).
func stateIs(state string, n int) string {
	return fmt.Sprintf(`(() => { const tr = [...document.querySelectorAll("#states tr")].find((tr) => tr.dataset.state === %q);
		return (tr ? Number(tr.cells[2].textContent) : 0) === %d; })()`, state, n)
}

// The console follows the queue without a reload and without polling: a
// document uploaded through the API shows as running, its completion in
// the finished counts and the charts; a failed one among the failed jobs
// with its attempt history; after the server drops the console's stream
// it reconnects and goes on; while no stream can be had it polls, and
// goes live again once one can. While nothing changes it sends no request.
func TestDashboard_ConsoleLive(t *testing.T) {
	t.Parallel()
	e := setup(t, 1, 0)
	e.embed.hold()
	p := openConsole(t, e)
	p.WaitFor("the database's health", `document.querySelector("#dbhealth").textContent.includes("LISTEN/NOTIFY queue in use")`, 10*time.Second)

	e.upload("live.txt", memo(1))
	p.WaitFor("the document running", stateIs("running", 1), 10*time.Second)
	p.WaitFor("the tenant's running job", `document.querySelector("#tenants tr[data-tenant]")?.cells[6].textContent === "1"`, 10*time.Second)
	e.embed.open()
	p.WaitFor("the completion in the counts and the chart", stateIs("running", 0)+" && "+stateIs("completed", 1)+
		` && document.querySelector("#throughput rect.ok")`, wait)

	// Nothing changes: the console goes 4 s without a request (it polled
	// every 3 s before it had the stream).
	quiet(t, e.console, 4*time.Second, 20*time.Second)

	e.embed.refuse(fmt.Errorf("%w: monthly quota used up", embedding.ErrQuotaExceeded))
	_, bad := e.upload("bad.txt", memo(2))
	failedRow := fmt.Sprintf(`#failed tr[data-job=%q]`, bad.ID)
	p.WaitFor("the failed job", `document.querySelector(`+jsQuote(failedRow)+`)?.cells[2].textContent.includes("quota")`, wait)
	p.Click(failedRow + " button.history")
	history := fmt.Sprintf(`#failed tr[data-history=%q]`, bad.ID)
	p.WaitFor("its attempt history", `(() => { const tr = document.querySelector(`+jsQuote(history+` tr[data-attempt="1"]`)+`);
		return tr && tr.dataset.outcome === "failed" && tr.cells[6].textContent.includes("quota"); })()`, 10*time.Second)
	if got := p.Text(fmt.Sprintf(`#failed tr[data-job=%q] button.history`, bad.ID)); got != "Hide history" {
		t.Errorf("the history button says %q", got)
	}
	checkAxeOn(t, p, "console with an attempt history")
	screenshot(t, p, "console-history")

	// The server drops the stream: the console reconnects by itself and
	// shows what happens next.
	_, opened := e.console.counts()
	if n := e.console.drop(); n != 1 {
		t.Fatalf("dropped %d console streams, want 1", n)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, again := e.console.counts(); again > opened {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the console did not open its event stream again after the drop")
		}
	}
	p.WaitFor("the stream back", `document.querySelector("#conn").dataset.state === "live"`, 10*time.Second)
	e.embed.refuse(nil)
	e.upload("after.txt", memo(3))
	p.WaitFor("the next completion", stateIs("completed", 2), wait)

	// No stream to be had: the console says so, reads the health every
	// 10 s meanwhile, and goes live again once the stream is back.
	e.console.setRefuse(true)
	e.console.drop()
	p.WaitFor("the console polling", `document.querySelector("#conn").dataset.state === "down" &&
		document.querySelector("#conn").textContent.includes("reading every 10 s")`, 10*time.Second)
	e.upload("polled.txt", memo(4))
	p.WaitFor("the completion read by polling", stateIs("completed", 3), wait)
	e.console.setRefuse(false)
	p.WaitFor("the stream live again", `document.querySelector("#conn").dataset.state === "live"`, 30*time.Second)

	var same bool
	p.Eval(`window.__sameLoad === true`, &same)
	if !same {
		t.Error("the console was reloaded")
	}
	if ex := p.Exceptions(); len(ex) > 0 {
		t.Errorf("the console threw: %q", ex)
	}
}

// An operator pauses the tenant from the console (after a confirmation):
// its next document waits, shown "paused" on the tenant's page instead of
// a queue position, and does not start; resumed from the console, it runs
// to completion. A queue is paused and resumed from its row the same way.
func TestDashboard_ConsolePauseTenant(t *testing.T) {
	t.Parallel()
	e := setup(t, 1, 0)
	// The pause routes come from another change; until they are served
	// this test waits for them by skipping.
	for _, want := range []string{"/v1/admin/tenants/{id}/pause", "/v1/admin/queues/{queue}/pause"} {
		if !slices.ContainsFunc(e.routes, func(r httpapi.RouteInfo) bool { return r.Method == "POST" && r.Pattern == want }) {
			t.Skipf("pending: POST %s is not served yet", want)
		}
	}
	p := openConsole(t, e)
	tenantRow := `#tenants tr[data-tenant]`
	p.WaitFor("the tenant active", `document.querySelector(`+jsQuote(tenantRow)+`)?.dataset.paused === "false"`, 10*time.Second)
	confirmAction(t, p, tenantRow, "pause", "true")
	p.WaitFor("the tenant paused", `document.querySelector(`+jsQuote(tenantRow)+`).cells[8].textContent === "paused"`, 10*time.Second)

	_, job := e.upload("held.txt", memo(1))
	e.page.WaitFor("the card paused", card("held.txt")+`?.querySelector(".ahead").textContent === "paused"`, wait)
	// The worker polls every 50 ms: in 2 s a job it may take would have
	// started.
	time.Sleep(2 * time.Second)
	var j httpapi.JobView
	e.get("/v1/jobs/"+job.ID, &j)
	if j.Status != "pending" {
		t.Fatalf("the paused tenant's job is %s, want pending", j.Status)
	}
	p.WaitFor("one waiting", `document.querySelector(`+jsQuote(tenantRow)+`).cells[5].textContent === "1"`, 10*time.Second)
	checkAxeOn(t, p, "console with a paused tenant")
	screenshot(t, p, "console-paused")

	confirmAction(t, p, tenantRow, "resume", "false")
	e.page.WaitFor("the document completed after the resume", card("held.txt")+`?.dataset.status === "completed"`, wait)

	queueRow := `#queues tr[data-queue="documents"]`
	p.WaitFor("the queue's row", `document.querySelector(`+jsQuote(queueRow)+`)?.dataset.paused === "false"`, 10*time.Second)
	confirmAction(t, p, queueRow, "pause", "true")
	confirmAction(t, p, queueRow, "resume", "false")
	e.noPageErrors()
	if ex := p.Exceptions(); len(ex) > 0 {
		t.Errorf("the console threw: %q", ex)
	}
}

// confirmAction clicks the button of class action in row, then its
// confirmation, until the row's data-paused reads want. The console redraws
// a row as its live events arrive: on a loaded machine a redraw between
// the two clicks dropped the confirmation, and the second click found no
// button. So each round waits for the confirmation and then for the state,
// briefly, and starts again from the first click; 30 s is a hang check.
func confirmAction(t *testing.T, p *webtest.Page, row, action, want string) {
	t.Helper()
	danger := `document.querySelector(` + jsQuote(row+" button.danger") + `) !== null`
	done := `document.querySelector(` + jsQuote(row) + `)?.dataset.paused === ` + jsQuote(want)
	for deadline := time.Now().Add(30 * time.Second); ; {
		if holds(p, done, 0) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s: data-paused never read %s", row, action, want)
		}
		if holds(p, `document.querySelector(`+jsQuote(row+" button."+action)+`) !== null`, 3*time.Second) {
			p.Click(row + " button." + action)
			if holds(p, danger, 3*time.Second) {
				p.Click(row + " button.danger")
				holds(p, done, 5*time.Second)
			}
		}
	}
}

// holds polls the JavaScript expression cond on p until it is true or
// within has passed, and says whether it held.
func holds(p *webtest.Page, cond string, within time.Duration) bool {
	for deadline := time.Now().Add(within); ; time.Sleep(50 * time.Millisecond) {
		var ok bool
		p.Eval(`Boolean(`+cond+`)`, &ok)
		if ok || time.Now().After(deadline) {
			return ok
		}
	}
}

// quiet waits for a stretch of the given length in which the console sends
// no request other than its open event stream, failing after within.
func quiet(t *testing.T, c *consoleTraffic, stretch, within time.Duration) {
	t.Helper()
	last, _ := c.counts()
	since := time.Now()
	for deadline := time.Now().Add(within); time.Since(since) < stretch; time.Sleep(100 * time.Millisecond) {
		if n, _ := c.counts(); n != last {
			last, since = n, time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("the console never went %s without a request in %s (it polls)", stretch, within)
		}
	}
}
