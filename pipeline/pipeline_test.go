package pipeline_test

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/pipeline"
	"github.com/docketq/docket/pipeline/extract"
	"github.com/docketq/docket/pipeline/extract/extracttest"
	"github.com/docketq/docket/queue"
)

func TestProcessor_PDF(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, backend string) {
		e := setup(t, backend, pipeline.Config{})
		events, stop := e.client.Bus().Subscribe(4096, func(ev queue.Event) bool {
			return ev.Job.Kind == pipeline.Kind
		})
		defer stop()
		docID, jobID := e.upload(tenantA, extract.TypePDF, extracttest.ProsePDF(10).Bytes())
		progress := progressUntilDone(t, events, jobID)
		if job := e.wait(jobID); job.State != queue.StateCompleted {
			t.Fatalf("job %s: %s", job.State, job.ErrorMessage)
		}
		checkProgress(t, progress)

		doc, chunks := e.document(tenantA, docID)
		f := doc.Fields
		switch {
		case doc.Status != docket.StatusCompleted:
			t.Errorf("status %s", doc.Status)
		case f == nil:
			t.Fatal("no fields")
		case f.Title != "Prose, 10 pages" || f.PageCount != 10 || f.WordCount < 1000 || f.Language != "en":
			t.Errorf("fields %+v", f)
		case f.ChunkCount != len(chunks) || len(chunks) < 10:
			t.Errorf("chunk count %d, %d chunks stored", f.ChunkCount, len(chunks))
		case f.EmbeddingModel != embedding.HashingModel || f.EmbeddingDimensions != embedding.DefaultDimensions:
			t.Errorf("embedding %s/%d", f.EmbeddingModel, f.EmbeddingDimensions)
		case doc.Warnings == nil || f.ActiveContent:
			t.Errorf("warnings %q, active %v", doc.Warnings, f.ActiveContent)
		}
		checkChunks(t, chunks, 10)
	})
}

// progressUntilDone collects the progress of job id from events until the
// job completes or fails.
func progressUntilDone(t *testing.T, events <-chan queue.Event, id int64) []*queue.Job {
	t.Helper()
	var out []*queue.Job
	timeout := time.After(waitLimit)
	for {
		select {
		case ev := <-events:
			if ev.Job.ID != id {
				continue
			}
			switch ev.Type {
			case queue.EventProgress:
				out = append(out, ev.Job)
			case queue.EventCompleted, queue.EventFailed, queue.EventRetrying:
				return out
			}
		case <-timeout:
			t.Fatalf("job %d: no end after %s", id, waitLimit)
		}
	}
}

// checkProgress checks that progress went through every stage in order,
// each percent inside its stage's range, never backwards.
func checkProgress(t *testing.T, progress []*queue.Job) {
	t.Helper()
	stage, percent := 0, 0
	var seen []string
	for _, j := range progress {
		i := slices.IndexFunc(pipeline.Stages, func(s pipeline.Stage) bool { return s.Name == j.Stage })
		switch {
		case i < 0:
			t.Fatalf("unknown stage %q", j.Stage)
		case i < stage || j.Progress < percent:
			t.Fatalf("progress went back: %s %d%% after %s %d%%", j.Stage, j.Progress, pipeline.Stages[stage].Name, percent)
		case j.Progress < pipeline.Stages[i].From || j.Progress > pipeline.Stages[i].To:
			t.Fatalf("%s at %d%%: outside %d-%d", j.Stage, j.Progress, pipeline.Stages[i].From, pipeline.Stages[i].To)
		}
		if len(seen) == 0 || seen[len(seen)-1] != j.Stage {
			seen = append(seen, j.Stage)
		}
		stage, percent = i, j.Progress
		t.Logf("%-11s %3d%%  %s", j.Stage, j.Progress, j.ProgressMessage)
	}
	want := []string{"downloading", "parsing", "chunking", "embedding", "analyzing"}
	if !slices.Equal(seen, want) {
		t.Errorf("stages %q, want %q", seen, want)
	}
}

// checkChunks checks chunk order and page ranges over a document of pages.
func checkChunks(t *testing.T, chunks []*docket.Chunk, pages int) {
	t.Helper()
	for i, c := range chunks {
		switch {
		case c.Index != i || c.Text == "":
			t.Fatalf("chunk %d: index %d, %d bytes", i, c.Index, len(c.Text))
		case c.PageStart < 1 || c.PageEnd < c.PageStart || c.PageEnd > pages:
			t.Fatalf("chunk %d: pages %d-%d", i, c.PageStart, c.PageEnd)
		case i > 0 && c.PageStart < chunks[i-1].PageStart:
			t.Fatalf("chunk %d starts on page %d, before chunk %d", i, c.PageStart, i-1)
		case c.Model != embedding.HashingModel || c.Dimensions != embedding.DefaultDimensions:
			t.Fatalf("chunk %d: model %s/%d", i, c.Model, c.Dimensions)
		}
	}
	if len(chunks) > 0 && (chunks[0].PageStart != 1 || chunks[len(chunks)-1].PageEnd != pages) {
		t.Errorf("chunks span pages %d-%d, want 1-%d", chunks[0].PageStart, chunks[len(chunks)-1].PageEnd, pages)
	}
}

func TestProcessor_Types(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, backend string) {
		e := setup(t, backend, pipeline.Config{})
		docx := extracttest.DOCX{Title: "Quarterly report", Body: extracttest.Para("Revenue grew on 2024-03-15.") +
			extracttest.PageBreak() + extracttest.Para("Costs were EUR 1,234.56 in the second quarter.")}
		tests := []struct {
			name      string
			typ       extract.Type
			data      string
			title     string
			pages     int
			wantWords string // a word of the first chunk
		}{
			{"docx", extract.TypeDOCX, string(docx.Bytes()), "Quarterly report", 2, "Revenue"},
			{"html", extract.TypeHTML, "<!DOCTYPE html><html><head><title>Hello page</title></head><body><p>Hello from HTML, dated 2023-01-02.</p></body></html>", "Hello page", 1, "Hello"},
			{"markdown", extract.TypeMarkdown, "# Notes\n\nSome *markdown* text about invoices.\n", "Notes", 1, "markdown"},
			{"text", extract.TypeText, "Plain text.\fSecond page of plain text.\n", "", 2, "Plain"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				docID, jobID := e.upload(tenantA, tt.typ, []byte(tt.data))
				if job := e.wait(jobID); job.State != queue.StateCompleted {
					t.Fatalf("job %s: %s", job.State, job.ErrorMessage)
				}
				doc, chunks := e.document(tenantA, docID)
				if doc.Fields == nil || doc.Fields.PageCount != tt.pages || tt.title != "" && doc.Fields.Title != tt.title {
					t.Fatalf("fields %+v", doc.Fields)
				}
				if len(chunks) == 0 || !strings.Contains(chunks[0].Text, tt.wantWords) {
					t.Fatalf("chunks %+v", chunks)
				}
				checkChunks(t, chunks, tt.pages)
			})
		}
	})
}

func TestProcessor_RejectedInput(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, backend string) {
		e := setup(t, backend, pipeline.Config{})
		_, bad := e.upload(tenantA, extract.TypePDF, []byte("%PDF-1.7\n%%EOF\n"))
		job := e.wait(bad)
		if job.State != queue.StateFailed || !strings.HasPrefix(job.ErrorMessage, "rejected_input: malformed: ") {
			t.Fatalf("job %s: %q", job.State, job.ErrorMessage)
		}
		if n := e.attempts(bad); n != 1 || job.Attempt != 1 {
			t.Fatalf("%d attempts (job says %d), want 1", n, job.Attempt)
		}
		// The worker survives and takes the next job.
		_, good := e.upload(tenantA, extract.TypeText, []byte("Still working."))
		if job := e.wait(good); job.State != queue.StateCompleted {
			t.Fatalf("next job %s: %s", job.State, job.ErrorMessage)
		}
	})
}

func TestProcessor_Warnings(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, backend string) {
		e := setup(t, backend, pipeline.Config{})
		tests := []struct {
			name    string
			pdf     extracttest.PDF
			warning string
			active  bool
		}{
			{"no text layer", extracttest.NoTextPDF(), extract.WarnNoTextLayer, false},
			{"active content", extracttest.ActivePDF(), "active content", true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				docID, jobID := e.upload(tenantA, extract.TypePDF, tt.pdf.Bytes())
				if job := e.wait(jobID); job.State != queue.StateCompleted {
					t.Fatalf("job %s: %s", job.State, job.ErrorMessage)
				}
				doc, _ := e.document(tenantA, docID)
				if !slices.ContainsFunc(doc.Warnings, func(w string) bool { return strings.HasPrefix(w, tt.warning) }) {
					t.Errorf("warnings %q, want %q", doc.Warnings, tt.warning)
				}
				if doc.Fields == nil || doc.Fields.ActiveContent != tt.active {
					t.Errorf("fields %+v", doc.Fields)
				}
			})
		}
	})
}

// TestProcessor_CrossTenant: a job of tenant A whose args name tenant B's
// document runs in A's scope, cannot see the document, and fails for good.
func TestProcessor_CrossTenant(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, backend string) {
		e := setup(t, backend, pipeline.Config{})
		other := e.storeBlob(tenantB, extract.TypeText, []byte("Tenant B's secret."))
		err := e.db.InTenant(e.ctx, tenantB, func(tx docket.Tx) error { return tx.DocumentInsert(e.ctx, other) })
		if err != nil {
			t.Fatal(err)
		}
		var jobID int64
		err = e.db.InTenant(e.ctx, tenantA, func(tx docket.Tx) error {
			res, err := e.enqueueTx(tx, other.ID)
			if res != nil {
				jobID = res.Job.ID
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		job := e.wait(jobID)
		if job.State != queue.StateFailed || job.ErrorMessage != "document not found: "+other.ID || e.attempts(jobID) != 1 {
			t.Fatalf("job %s after %d attempts: %q", job.State, e.attempts(jobID), job.ErrorMessage)
		}
		doc, chunks := e.document(tenantB, other.ID)
		if doc.Fields != nil || len(doc.Warnings) != 0 || len(chunks) != 0 {
			t.Fatalf("tenant B's document changed: %+v, %d chunks", doc, len(chunks))
		}
	})
}

func TestProcessor_DeletedDocument(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, backend string) {
		e := setup(t, backend, pipeline.Config{})
		doc := e.storeBlob(tenantA, extract.TypeText, []byte("Soon gone."))
		var jobID int64
		err := e.db.InTenant(e.ctx, tenantA, func(tx docket.Tx) error {
			if err := tx.DocumentInsert(e.ctx, doc); err != nil {
				return err
			}
			res, err := e.enqueueTx(tx, doc.ID)
			if err != nil {
				return err
			}
			jobID = res.Job.ID
			_, err = tx.DocumentDelete(e.ctx, doc.ID)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		job := e.wait(jobID)
		if job.State != queue.StateFailed || !strings.HasPrefix(job.ErrorMessage, "document not found") || e.attempts(jobID) != 1 {
			t.Fatalf("job %s after %d attempts: %q", job.State, e.attempts(jobID), job.ErrorMessage)
		}
	})
}

// lockedBuffer is a log destination safe for the worker's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestProcessor_MissingBlob: a document whose blob this worker cannot find
// (a worker on another host with its own local directory) fails with a
// message that says so, and each failed attempt is logged: the retries as
// warnings, the end as an error.
func TestProcessor_MissingBlob(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, backend string) {
		var logs lockedBuffer
		e := setup(t, backend, pipeline.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		doc := e.storeBlob(tenantA, extract.TypeText, []byte("Uploaded on another host."))
		if err := e.blobs.Delete(e.ctx, doc.BlobKey); err != nil {
			t.Fatal(err)
		}
		var jobID int64
		err := e.db.InTenant(e.ctx, tenantA, func(tx docket.Tx) error {
			res, err := e.enqueueTx(tx, doc.ID)
			if err != nil {
				return err
			}
			doc.JobID, jobID = res.Job.ID, res.Job.ID
			return tx.DocumentInsert(e.ctx, doc)
		})
		if err != nil {
			t.Fatal(err)
		}
		job := e.wait(jobID)
		if job.State != queue.StateFailed || !strings.Contains(job.ErrorMessage, "blob not found") ||
			!strings.Contains(job.ErrorMessage, "is not in this worker's blob store") {
			t.Fatalf("job %s: %q", job.State, job.ErrorMessage)
		}
		d, _ := e.document(tenantA, doc.ID)
		if d.Status != docket.StatusFailed || d.Error != job.ErrorMessage {
			t.Errorf("document %s with error %q, want failed with the job's", d.Status, d.Error)
		}
		deadline := time.Now().Add(waitLimit)
		for !strings.Contains(logs.String(), `level=ERROR msg="document failed"`) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond) // the hook runs after the outcome is stored
		}
		out := logs.String()
		for _, want := range []string{
			`level=ERROR msg="document failed" tenant_id=acme document_id=` + doc.ID,
			`level=WARN msg="document attempt failed; will retry" tenant_id=acme document_id=` + doc.ID,
			"is not in this worker's blob store",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("log lacks %q:\n%s", want, out)
			}
		}
	})
}
