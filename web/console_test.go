package web_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/web/webtest"
)

// The operator console shows a job that runs too long among the stuck
// jobs; discarded there (after a confirmation) it shows among the failed
// jobs with why, and requeued from there it runs to completion. Queue
// health, the 24-hour charts and the tenant's backlog are shown with it.
func TestDashboard_ConsoleStuckJobRequeued(t *testing.T) {
	t.Parallel()
	e := setup(t, 1, 0)
	e.embed.hold()
	_, job := e.upload("stuck.txt", memo(1))
	e.page.WaitFor("stuck.txt held in embedding", card("stuck.txt")+`?.querySelector(".stepper li.current")?.dataset.stage === "embedding"`, wait)

	p := openConsole(t, e)
	p.WaitFor("the tenant with its running job", `[...document.querySelectorAll("#tenants tr")].some((tr) =>
		tr.cells[0].textContent === "acme" && tr.cells[1].textContent === "starter" && tr.cells[3].textContent === "2" && tr.cells[6].textContent === "1")`, 10*time.Second)
	p.WaitFor("one running job in queue health", `[...document.querySelectorAll("#states tr")].some((tr) =>
		tr.cells[1].textContent === "running" && tr.cells[2].textContent === "1")`, 10*time.Second)

	consoleKeys(t, e, p)

	row := func(table string) string { return fmt.Sprintf(`#%s tr[data-job=%q]`, table, job.ID) }
	p.Type("#olderthan", "1")
	p.WaitFor("the job among the stuck", `document.querySelector(`+jsQuote(row("stuck"))+`)?.cells[2].textContent === "running too long" &&
		document.querySelector(`+jsQuote(row("stuck"))+`).cells[1].textContent === "acme"`, 10*time.Second)
	p.Click(row("stuck") + " button.discard")
	p.WaitFor("the confirmation", `document.querySelector(`+jsQuote(row("stuck")+" button.danger")+`)?.textContent === "Yes, discard"`, 5*time.Second)
	p.Click(row("stuck") + " button.danger")
	p.WaitFor("the job among the failed", `document.querySelector(`+jsQuote(row("failed"))+`)?.cells[2].textContent === "discarded by an administrator"`, 10*time.Second)
	e.page.WaitFor("the tenant's card failed", card("stuck.txt")+`?.dataset.status === "failed"`, wait)
	checkAxeOn(t, p, "console")

	// Its history: the one attempt, ended by the discard.
	p.Click(row("failed") + " button.history")
	attempts := fmt.Sprintf(`#failed tr[data-history=%q] tr[data-attempt]`, job.ID)
	p.WaitFor("the discarded attempt in the history", `[...document.querySelectorAll(`+jsQuote(attempts)+`)]
		.some((tr) => tr.dataset.attempt === "1" && tr.dataset.outcome !== "running")`, 10*time.Second)
	e.embed.open()
	p.Click(row("failed") + " button.requeue")
	p.Click(row("failed") + " button.danger")
	p.WaitFor("the failed job requeued", `document.querySelector("#actionmsg").textContent.includes("job `+job.ID+`: done")`, 10*time.Second)
	e.page.WaitFor("the tenant's card completed after the requeue", card("stuck.txt")+`?.dataset.status === "completed"`, wait)
	p.WaitFor("the failed list empty and the charts drawn", `!document.querySelector(`+jsQuote(row("failed"))+`) &&
		document.querySelector("#throughput rect.ok") && document.querySelector("#throughput rect.bad")`, wait)
	var docs struct{ Documents []httpapi.DocumentView }
	e.get("/v1/documents", &docs)
	if len(docs.Documents) != 1 || docs.Documents[0].Status != "completed" {
		t.Errorf("documents %+v, want stuck.txt completed", docs.Documents)
	}
	screenshot(t, p, "console")
	for _, line := range p.Console() {
		if strings.Contains(line, "Content Security Policy") {
			t.Errorf("CSP violation: %s", line)
		}
	}
	if ex := p.Exceptions(); len(ex) > 0 {
		t.Errorf("the console threw: %q", ex)
	}
}

// consoleKeys raises the tenant's limit from the console, makes it a new
// key, sees the key work, revokes it there and sees it refused.
func consoleKeys(t *testing.T, e *env, p *webtest.Page) {
	t.Helper()
	keyIDs := func() []string {
		var ids []string
		p.Eval(`[...document.querySelectorAll("#tenants tr.keysrow tbody tr")].map((tr) => tr.dataset.key)`, &ids)
		return ids
	}
	p.Click(`#tenants tr[data-tenant] button.manage`)
	p.WaitFor("the tenant's one key", `document.querySelectorAll("#tenants tr.keysrow tbody tr").length === 1`, 10*time.Second)

	// Two documents at once from now on, and a weight of 5 instead of
	// the starter plan's 2.
	p.Type(`#tenants form.settings input[type=number]`, "2")
	p.Type(`#tenants form.settings input[id$="-weight"]`, "5")
	p.Click(`#tenants form.settings button[type=submit]`)
	p.WaitFor("the new limit and weight", `document.querySelector("#actionmsg").textContent === "acme: starter plan, 2 at once, 50 uploads per hour, weight 5" &&
		document.querySelector("#tenants tr[data-tenant]").cells[2].textContent === "2" &&
		document.querySelector("#tenants tr[data-tenant]").cells[3].textContent === "5"`, 10*time.Second)
	var tenants struct{ Tenants []httpapi.TenantView }
	e.adminGet("/v1/admin/tenants", &tenants)
	if len(tenants.Tenants) != 1 || tenants.Tenants[0].Weight != 5 || tenants.Tenants[0].EffectiveWeight != 5 {
		t.Errorf("tenants %+v, want acme at weight 5", tenants.Tenants)
	}

	before := keyIDs()
	p.Click(`#tenants tr.keysrow p button`)
	p.WaitFor("the new key shown", `document.querySelector("#newkey").textContent.includes("shown this once: ")`, 10*time.Second)
	_, plain, _ := strings.Cut(p.Text("#newkey"), "shown this once: ")
	p.WaitFor("two keys", `document.querySelectorAll("#tenants tr.keysrow tbody tr").length === 2`, 10*time.Second)
	var fresh string
	for _, id := range keyIDs() {
		if !slices.Contains(before, id) {
			fresh = id
		}
	}
	if status := e.status("/v1/rate-limit", plain); status != http.StatusOK {
		t.Fatalf("the new key: %d, want 200", status)
	}
	keyRow := fmt.Sprintf(`#tenants tr.keysrow tr[data-key=%q]`, fresh)
	p.Click(keyRow + " button")
	p.Click(keyRow + " button.danger")
	p.WaitFor("the key revoked", `document.querySelector(`+jsQuote(keyRow)+`)?.cells[3].textContent !== "–"`, 10*time.Second)
	if status := e.status("/v1/rate-limit", plain); status != http.StatusUnauthorized {
		t.Errorf("the revoked key: %d, want 401", status)
	}
}
