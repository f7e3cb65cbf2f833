package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/docketq/docket"
	"github.com/docketq/docket/pipeline/analyze"
	"github.com/docketq/docket/pipeline/extract"
	"github.com/docketq/docket/queue"
)

// save stores the chunks, the document's fields, warnings and status and
// the job's completion in one transaction of the job's tenant: all of it
// commits, or none. A lost lease rolls it back and is returned as
// queue.ErrLeaseLost.
func (j *job) save(ctx context.Context) error {
	chunks := j.docketChunks()
	status := docket.StatusCompleted
	err := j.p.cfg.Store.InTenant(ctx, j.tenant, func(tx docket.Tx) error {
		if err := tx.ChunkReplace(ctx, j.docID, chunks); err != nil {
			return notFound(err, j.docID, "replace chunks")
		}
		_, err := tx.DocumentUpdate(ctx, &docket.DocumentUpdateParams{
			ID: j.docID, Status: &status, Fields: j.fields, Warnings: j.warns,
		})
		if err != nil {
			return notFound(err, j.docID, "update document")
		}
		return j.task.CompleteTx(ctx, tx.Native())
	})
	if err != nil && !errors.Is(err, queue.ErrLeaseLost) {
		return fmt.Errorf("save results: %w", err)
	}
	return err
}

// docketChunks pairs the chunks with their vectors.
func (j *job) docketChunks() []*docket.Chunk {
	model, dims := j.fields.EmbeddingModel, j.fields.EmbeddingDimensions
	out := make([]*docket.Chunk, len(j.chunks))
	for i, c := range j.chunks {
		out[i] = &docket.Chunk{
			DocumentID: j.docID, TenantID: j.tenant, Index: c.Index, Text: c.Text,
			PageStart: c.PageStart, PageEnd: c.PageEnd,
			Vector: j.vectors[i], Model: model, Dimensions: dims, Language: j.fields.Language,
		}
	}
	return out
}

// Caps of the fields stored with a document (the title's is
// extract.MaxTitleBytes): every list is cut to maxFieldItems and every
// other string to maxFieldBytes, on a rune boundary.
const (
	maxFieldItems = 100
	maxFieldBytes = 256
)

// fieldsOf converts analysis results to the document's fields, capped.
func fieldsOf(f analyze.Fields) *docket.Fields {
	amounts := make([]docket.Amount, min(len(f.Amounts), maxFieldItems))
	for i := range amounts {
		a := f.Amounts[i]
		amounts[i] = docket.Amount{Value: capField(a.Value), Currency: capField(a.Currency)}
	}
	return &docket.Fields{
		Title: extract.Truncate(f.Title, extract.MaxTitleBytes), Language: capField(f.Language),
		PageCount: f.PageCount, WordCount: f.WordCount,
		Dates: capList(f.Dates), Amounts: amounts, KeyPhrases: capList(f.KeyPhrases),
	}
}

func capField(s string) string { return extract.Truncate(s, maxFieldBytes) }

// capList returns at most maxFieldItems of ss, each capped.
func capList(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, min(len(ss), maxFieldItems))
	for i := range out {
		out[i] = capField(ss[i])
	}
	return out
}
