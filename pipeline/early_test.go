package pipeline_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/pipeline"
	"github.com/docketq/docket/pipeline/extract"
	"github.com/docketq/docket/pipeline/extract/extracttest"
	"github.com/docketq/docket/queue"
)

// harbourPDF is a two-page PDF with a title, a date and an amount.
func harbourPDF() []byte {
	return extracttest.PDF{Title: "Harbour survey", Pages: []extracttest.PDFPage{
		{Text: extracttest.Lines(72, 720, 14, "The harbour survey counted seventeen lighthouses in March 2026.", "Each lighthouse keeper filed a report on 12 March 2026.")},
		{Text: extracttest.Lines(72, 720, 14, "Storm damage to the northern pier was repaired in May for EUR 12,500.")},
	}}.Bytes()
}

// A document job reports its early results while it runs: title, language
// and counts once parsed (readable in the store while the job waits on the
// embedding service), then the chunk count, then key phrases, dates and
// amounts before the results are saved; each report a superset of the last,
// agreeing with the document's fields, and kept on the job once it
// completes.
func TestProcessor_EarlyResults(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, backend string) {
		entered, release := make(chan struct{}, 1), make(chan struct{})
		embedder := embedFunc(func(ctx context.Context, texts []string) ([][]float32, error) {
			select {
			case entered <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return hashing.Embed(ctx, texts)
		})
		e := setup(t, backend, pipeline.Config{Embedder: embedder})
		events, stop := e.client.Bus().Subscribe(4096, func(ev queue.Event) bool { return ev.Job.Kind == pipeline.Kind })
		defer stop()
		docID, jobID := e.upload(tenantA, extract.TypePDF, harbourPDF())

		<-entered // held in embedding: the job runs, the document has no fields
		job, err := e.client.Get(e.ctx, jobID)
		if err != nil {
			t.Fatal(err)
		}
		held := decodeEarly(t, job.PartialResult)
		if doc, _ := e.document(tenantA, docID); job.State != queue.StateRunning || doc.Fields != nil {
			t.Fatalf("job %s, document fields %+v: want it running, without fields yet", job.State, doc.Fields)
		}
		if held.Title != "Harbour survey" || held.Language != "en" || held.PageCount != 2 || held.WordCount < 20 ||
			held.ChunkCount < 1 || held.KeyPhrases != nil || held.Dates != nil {
			t.Errorf("early results while embedding: %+v, want title, language, counts and nothing of the analysis", held)
		}
		close(release)

		var reports []pipeline.Early
		var stages []string
		for ev := range events {
			if ev.Job.ID != jobID {
				continue
			}
			if ev.Type == queue.EventCompleted || ev.Type == queue.EventFailed || ev.Type == queue.EventRetrying {
				break
			}
			if ev.Type == queue.EventProgress && ev.Job.PartialResult != nil {
				r := decodeEarly(t, ev.Job.PartialResult)
				if len(reports) == 0 || !slices.Equal(ev.Job.PartialResult, mustJSON(t, reports[len(reports)-1])) {
					reports = append(reports, r)
					stages = append(stages, ev.Job.Stage)
				}
			}
		}
		done := e.wait(jobID)
		if done.State != queue.StateCompleted {
			t.Fatalf("job %s: %s", done.State, done.ErrorMessage)
		}
		if want := []string{"chunking", "embedding", "analyzing"}; !slices.Equal(stages, want) {
			t.Fatalf("early results reported with stages %q, want %q (%+v)", stages, want, reports)
		}
		doc, _ := e.document(tenantA, docID)
		f := doc.Fields
		first, last := reports[0], reports[2]
		if first.Title != f.Title || first.Language != f.Language || first.PageCount != f.PageCount || first.WordCount != f.WordCount || first.ChunkCount != 0 {
			t.Errorf("after parsing %+v, fields %+v", first, f)
		}
		if reports[1].ChunkCount != f.ChunkCount {
			t.Errorf("chunk count %d reported, %d in the fields", reports[1].ChunkCount, f.ChunkCount)
		}
		if !slices.Equal(last.KeyPhrases, f.KeyPhrases) || !slices.Equal(last.Dates, f.Dates) || !slices.Equal(last.Amounts, f.Amounts) ||
			!slices.Contains(last.Dates, "2026-03-12") || !slices.Contains(last.Amounts, docket.Amount{Value: "12500", Currency: "EUR"}) {
			t.Errorf("after analysis %+v, fields %+v", last, f)
		}
		if kept := decodeEarly(t, done.PartialResult); !slices.Equal(kept.KeyPhrases, last.KeyPhrases) || kept.Title != last.Title {
			t.Errorf("completed job keeps %+v, want %+v", kept, last)
		}
	})
}

func decodeEarly(t *testing.T, raw json.RawMessage) pipeline.Early {
	t.Helper()
	var e pipeline.Early
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("partial result %q: %v", raw, err)
	}
	return e
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
