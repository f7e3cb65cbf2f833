package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/pipeline/analyze"
	"github.com/docketq/docket/pipeline/chunk"
	"github.com/docketq/docket/pipeline/extract"
	"github.com/docketq/docket/queue"
)

// saveChunks stores a batch of chunks with their vectors in a transaction
// of the job's tenant fenced by the job's lease: the first batch replaces
// whatever chunks the document had (an earlier attempt's), or in a step of
// a workflow those of its page range (indexes, chunkIndexes), the others
// are added. A lost lease rolls it back and is returned as
// queue.ErrLeaseLost. It returns how long the transaction held the store:
// from its begin, once its turn came, to its commit.
func (j *job) saveChunks(ctx context.Context, first bool, batch []chunk.Chunk, vecs [][]float32) (held time.Duration, err error) {
	chunks := make([]*docket.Chunk, len(batch))
	model, lang := j.p.cfg.Embedder.Model(), capField(j.analysis.Language)
	from, to := j.indexes()
	for i, c := range batch {
		if from+c.Index >= to {
			return 0, queue.Permanent(fmt.Errorf("%s: %s: pages %d-%d have more than %d chunks: %w", ReasonRejectedInput,
				extract.Reason(extract.ErrTooLarge), j.rng.First, j.rng.Last, to-from, extract.ErrTooLarge))
		}
		chunks[i] = &docket.Chunk{
			DocumentID: j.docID, TenantID: j.tenant, Index: from + c.Index, Text: c.Text,
			PageStart: c.PageStart, PageEnd: c.PageEnd,
			Vector: vecs[i], Model: model, Dimensions: j.dims, Language: lang,
		}
	}
	var began time.Time
	err = j.p.cfg.Store.InTenant(ctx, j.tenant, func(tx docket.Tx) error {
		began = time.Now()
		write := tx.ChunkAppend
		switch {
		case first && j.rng != nil:
			if err := tx.ChunkDeleteIndexes(ctx, j.docID, from, to); err != nil {
				return notFound(err, j.docID, "delete the range's chunks")
			}
		case first:
			write = tx.ChunkReplace
		}
		if err := write(ctx, j.docID, chunks); err != nil {
			return notFound(err, j.docID, "write")
		}
		return j.task.FenceTx(ctx, tx.Native()) // last: it locks the job's row until the commit
	})
	if !began.IsZero() {
		held = time.Since(began)
	}
	if err != nil && !errors.Is(err, queue.ErrLeaseLost) {
		return held, fmt.Errorf("save chunks %d-%d: %w", batch[0].Index, batch[len(batch)-1].Index, err)
	}
	return held, err
}

// chunkStride is how many chunk indexes each page of a workflow's
// document has: a step's chunks are numbered from (First-1)*chunkStride,
// and may use its pages' indexes, however they fall among its pages. The
// indexes of a page are the same whatever the ranges: a range's delete
// (ChunkDeleteIndexes) never touches another range's chunks, and the
// ranges of one run cover every chunk an earlier run saved.
const chunkStride = 1 << 14

// indexes returns the chunk indexes the job's chunks take, [from, to):
// all of them for a whole document, its pages' for a step.
func (j *job) indexes() (from, to int) {
	if j.rng == nil {
		return 0, math.MaxInt
	}
	return (j.rng.First - 1) * chunkStride, j.rng.Last * chunkStride
}

// save stores the document's fields, warnings and status and the job's
// completion in one transaction of the job's tenant (the chunks are saved
// already): all of it commits, or none. A lost lease rolls it back and is
// returned as queue.ErrLeaseLost.
func (j *job) save(ctx context.Context) error {
	status := docket.StatusCompleted
	err := j.p.cfg.Store.InTenant(ctx, j.tenant, func(tx docket.Tx) error {
		if j.nchunk == 0 { // no batch replaced an earlier attempt's
			if err := tx.ChunkReplace(ctx, j.docID, nil); err != nil {
				return notFound(err, j.docID, "replace chunks")
			}
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
