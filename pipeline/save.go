package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/docketq/docket"
	"github.com/docketq/docket/pipeline/analyze"
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
			Vector: j.vectors[i], Model: model, Dimensions: dims,
		}
	}
	return out
}

// fieldsOf converts analysis results to the document's fields.
func fieldsOf(f analyze.Fields) *docket.Fields {
	amounts := make([]docket.Amount, len(f.Amounts))
	for i, a := range f.Amounts {
		amounts[i] = docket.Amount{Value: a.Value, Currency: a.Currency}
	}
	return &docket.Fields{
		Title: f.Title, Language: f.Language, PageCount: f.PageCount, WordCount: f.WordCount,
		Dates: f.Dates, Amounts: amounts, KeyPhrases: f.KeyPhrases,
	}
}
