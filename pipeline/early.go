package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/docketq/docket"
	"github.com/docketq/docket/pipeline/analyze"
	"github.com/docketq/docket/pipeline/extract"
	"github.com/docketq/docket/queue"
)

// Early is a document job's partial result (queue.Job.PartialResult,
// "partial_result" in the API's jobs and in the events of GET /v1/events):
// the document's fields as far as the job knows them while it runs, under
// the names docket.Fields has in JSON. The job reports it three times,
// each a superset of the last: title, language, page and word counts once
// the text is extracted (with the chunking stage), the chunk count once it
// is split (with the embedding stage), and the first key phrases, dates and
// amounts once it is analysed, before its results are saved. The complete
// fields are the document's once the job completes; the job keeps its last
// Early.
type Early struct {
	Title      string          `json:"title"`
	Language   string          `json:"language"`
	PageCount  int             `json:"page_count"`
	WordCount  int             `json:"word_count"`
	ChunkCount int             `json:"chunk_count,omitempty"`
	KeyPhrases []string        `json:"key_phrases,omitempty"`
	Dates      []string        `json:"dates,omitempty"`
	Amounts    []docket.Amount `json:"amounts,omitempty"`
}

// earlyItems caps each list of an Early: a preview, well within
// queue.MaxPartialResultBytes (the document's fields have them all).
const earlyItems = 20

// earlyOverview is what a job knows once its text is extracted; it fails
// with ctx's error once ctx is done.
func earlyOverview(ctx context.Context, pages []analyze.Page, title string) (Early, error) {
	f, err := analyze.OverviewContext(ctx, pages, analyze.Options{Title: title})
	if err != nil {
		return Early{}, fmt.Errorf("overview: %w", err)
	}
	return Early{
		Title: extract.Truncate(f.Title, extract.MaxTitleBytes), Language: capField(f.Language),
		PageCount: f.PageCount, WordCount: f.WordCount,
	}, nil
}

// withFields adds the first key phrases, dates and amounts of f.
func (e Early) withFields(f *docket.Fields) Early {
	e.KeyPhrases = f.KeyPhrases[:min(len(f.KeyPhrases), earlyItems)]
	e.Dates = f.Dates[:min(len(f.Dates), earlyItems)]
	e.Amounts = f.Amounts[:min(len(f.Amounts), earlyItems)]
	return e
}

// encode returns e as JSON of at most queue.MaxPartialResultBytes: lists
// are halved, then the title, until it fits (only text that JSON escapes
// heavily comes near the limit).
func (e Early) encode() json.RawMessage {
	for {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(e) // strings, numbers and lists: always encodes
		if b := bytes.TrimSuffix(buf.Bytes(), []byte("\n")); len(b) <= queue.MaxPartialResultBytes {
			return b
		}
		switch {
		case len(e.Amounts) > 0:
			e.Amounts = e.Amounts[:len(e.Amounts)/2]
		case len(e.Dates) > 0:
			e.Dates = e.Dates[:len(e.Dates)/2]
		case len(e.KeyPhrases) > 0:
			e.KeyPhrases = e.KeyPhrases[:len(e.KeyPhrases)/2]
		default:
			e.Title = extract.Truncate(e.Title, len(e.Title)/2)
		}
	}
}
