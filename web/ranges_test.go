package web_test

import (
	"strings"
	"testing"

	"github.com/docketq/docket/pipeline/extract/extracttest"
)

// A PDF of more pages than the processor's RangePages is processed as a
// step per range of pages: its card lists the ranges, each completed, and
// the document completes.
func TestDashboard_PDFRanges(t *testing.T) {
	t.Parallel()
	e := setupWith(t, 2, 0, 2)
	pdf := writeFile(t, "prose.pdf", extracttest.ProsePDF(5).Bytes())
	e.page.DropFiles("#dropzone", pdf)
	e.page.WaitFor("prose.pdf completed with its three ranges", card("prose.pdf")+`?.dataset.status === "completed" && [...`+
		card("prose.pdf")+`.querySelectorAll(".ranges li")].filter((li) => li.dataset.status === "completed").length === 3`, wait)
	var text string
	e.page.Eval(card("prose.pdf")+`.querySelector(".ranges").textContent`, &text)
	for _, want := range []string{"pages 1–2 Completed 100 %", "pages 3–4 Completed 100 %", "pages 5–5 Completed 100 %"} {
		if !strings.Contains(text, want) {
			t.Errorf("ranges %q, want %q", text, want)
		}
	}
	e.screenshot("dashboard-ranges")
	e.checkAxe("ranges")
	e.noPageErrors()
}
