package pipeline_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/internal/race"
	"github.com/docketq/docket/pipeline"
	"github.com/docketq/docket/pipeline/extract"
	"github.com/docketq/docket/pipeline/extract/extracttest"
	"github.com/docketq/docket/pipeline/sandbox"
	"github.com/docketq/docket/queue"
)

// Hostile inputs through the job: every one ends its job
// within the parse deadline, either completed (where the table allows it,
// active content flagged) or failed for good after exactly one attempt with
// its reason code, and the worker keeps working.
func TestProcessor_BombTable(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("parses the whole bomb table (tens of seconds on two cores)")
	}
	// The PDF bombs go through the sandbox, as serve and worker parse them: a
	// child of 192 MiB (256 in the nightly tier) stops a title or flate bomb
	// in a second or two, where in process it runs to the parse deadline.
	// The DOCX bombs, which the parser's own limits end at once, run in
	// process, so that the test spends a child start only where it must.
	pool := newSandbox(t, sandbox.Config{Procs: 2, MemoryLimit: extracttest.BombSandboxMemoryLimit})
	sandboxed := setup(t, "sqlite", pipeline.Config{Sandbox: pool, Extract: extract.Options{Timeout: 10 * time.Second}})
	inProcess := setup(t, "sqlite", pipeline.Config{Extract: extract.Options{Timeout: 10 * time.Second}})
	type run struct {
		e   *env
		c   extracttest.Case
		doc string
		job int64
	}
	var runs []run
	for _, c := range extracttest.PDFCases() {
		runs = append(runs, run{e: sandboxed, c: c})
	}
	for _, c := range extracttest.DOCXCases() {
		runs = append(runs, run{e: inProcess, c: c})
	}
	for i := range runs {
		r := &runs[i]
		r.doc, r.job = r.e.upload(tenantA, extract.Type(r.c.Type), r.c.Data)
	}
	for _, r := range runs {
		c, e := r.c, r.e
		t.Run(c.Name, func(t *testing.T) {
			job := e.wait(r.job)
			if n := e.attempts(r.job); n != 1 {
				t.Errorf("%d attempts", n)
			}
			switch job.State {
			case queue.StateCompleted:
				if !slices.Contains(c.Want, "") {
					t.Fatalf("completed; want one of %q", c.Want)
				}
				if doc, _ := e.document(tenantA, r.doc); c.Active && !doc.Fields.ActiveContent {
					t.Errorf("active content not flagged: %+v", doc.Fields)
				}
			case queue.StateFailed:
				if !slices.ContainsFunc(c.Want, func(r string) bool {
					return r != "" && strings.HasPrefix(job.ErrorMessage, fmt.Sprintf("%s: %s: ", pipeline.ReasonRejectedInput, r))
				}) {
					t.Fatalf("failed with %q; want one of %q", job.ErrorMessage, c.Want)
				}
			default:
				t.Fatalf("job %s: %q", job.State, job.ErrorMessage)
			}
		})
	}
	for _, e := range []*env{sandboxed, inProcess} {
		_, next := e.upload(tenantA, extract.TypeText, []byte("The worker survived."))
		if job := e.wait(next); job.State != queue.StateCompleted {
			t.Fatalf("next job %s: %s", job.State, job.ErrorMessage)
		}
	}
}

// TestProcessor_BombRSS runs each bomb of the table through a document job
// in a child process of its own (this test binary, re-executed, on SQLite,
// with the production engine and memory budget) and bounds the child's peak
// resident set by what the budget reckons the parse at: a hostile document
// costs the worker no more than that. The figures are in docs/security.md.
func TestProcessor_BombRSS(t *testing.T) {
	if name := os.Getenv(extracttest.ChildEnv); name != "" {
		bombJobChild(t, name)
		return
	}
	if testing.Short() {
		t.Skip("runs every bomb in a child process")
	}
	if race.Enabled {
		t.Skip("peak RSS under the race detector measures the detector; scripts/test.sh runs this test without -race")
	}
	for _, name := range extracttest.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			extracttest.RunChild(t, "TestProcessor_BombRSS", name, 1).CheckBound(t)
		})
	}
}

// bombJobChild uploads the named bomb, waits for its job and reports the
// peak RSS the job took, from a peak reset once the worker and the PDF
// engine run.
func bombJobChild(t *testing.T, name string) {
	c, ok := extracttest.Named(name)
	if !ok {
		t.Fatalf("no bomb %q", name)
	}
	// The production engine at the tier's size, started before the peak is reset.
	engine, err := extract.NewPDFEngine(extract.PDFConfig{MemoryLimit: extracttest.BombPDFMemoryLimit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = engine.Close() })
	opts := extract.Options{Timeout: 20 * time.Second, PDF: engine}
	e := setup(t, "sqlite", pipeline.Config{Extract: opts})
	base, err := extracttest.ResetPeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	_, id := e.upload(tenantA, extract.Type(c.Type), c.Data)
	job := e.wait(id)
	peak, err := extracttest.PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	cost := extract.Cost(extract.Type(c.Type), int64(len(c.Data)), opts)
	extracttest.ChildResult{Peak: peak, Base: base, Cost: cost, Outcome: string(job.State)}.Report()
}
