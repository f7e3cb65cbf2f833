package pipeline_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/pipeline"
	"github.com/docketq/docket/pipeline/extract"
	"github.com/docketq/docket/pipeline/sandbox"
	"github.com/docketq/docket/queue"
)

// newSandbox returns a pool of one child, closed with the test.
func newSandbox(tb testing.TB, cfg sandbox.Config) *sandbox.Pool {
	tb.Helper()
	p, err := sandbox.NewPool(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = p.Close() })
	return p
}

// TestProcessor_Sandbox: with a sandbox, a document over its CPU time
// fails for good as too slow, and the next one is processed, with the
// same fields as in process.
func TestProcessor_Sandbox(t *testing.T) {
	t.Parallel()
	pool := newSandbox(t, sandbox.Config{Procs: 1, CPULimit: 20 * time.Millisecond, WatchInterval: 10 * time.Millisecond})
	e := setup(t, "sqlite", pipeline.Config{Sandbox: pool})
	_, slow := e.upload(tenantA, extract.TypeText, bytes.Repeat([]byte("$1 "), 2<<20))
	job := e.wait(slow)
	if job.State != queue.StateFailed || !strings.HasPrefix(job.ErrorMessage, "rejected_input: too_slow: ") {
		t.Fatalf("job %s: %q", job.State, job.ErrorMessage)
	}
	if n := e.attempts(slow); n != 1 {
		t.Fatalf("%d attempts, want 1", n)
	}
	text := "Invoice 42, 3 March 2024. Total due: €1.234,50."
	docID, good := e.upload(tenantA, extract.TypeText, []byte(text))
	if job := e.wait(good); job.State != queue.StateCompleted {
		t.Fatalf("next job %s: %s", job.State, job.ErrorMessage)
	}
	doc, chunks := e.document(tenantA, docID)
	if len(chunks) != 1 || doc.Fields == nil || len(doc.Fields.Amounts) != 1 || doc.Fields.Dates[0] != "2024-03-03" {
		t.Fatalf("fields %+v, %d chunks", doc.Fields, len(chunks))
	}
}
