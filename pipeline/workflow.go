package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/docketq/docket"
	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/pipeline/extract"
	"github.com/docketq/docket/queue"
)

// RangeKind is the job kind of one step of a long PDF's workflow: the
// pages of a range, extracted, chunked, embedded and saved (RangeArgs).
const RangeKind = docket.DocumentPagesKind

// RangeArgs are the arguments of a RangeKind job.
type RangeArgs = docket.DocumentPagesArgs

// RangeResult is a RangeKind job's result: what its pages hold, for the
// document job to merge.
type RangeResult struct {
	First      int      `json:"first_page"`
	Last       int      `json:"last_page"`
	Chunks     int      `json:"chunk_count"`
	Dimensions int      `json:"embedding_dimensions,omitempty"`
	Active     bool     `json:"active_content,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
	// Fields are the analysis of the range's pages, their lists capped as
	// a document's are; PageCount is the range's.
	Fields docket.Fields `json:"fields"`
}

// stepName names the step of pages first to last: "pages-0001-0032".
func stepName(first, last int) string { return fmt.Sprintf("pages-%04d-%04d", first, last) }

// ranges splits pages 1 to n into ranges of size pages, the last shorter.
func ranges(n, size int) []extract.PageRange {
	out := make([]extract.PageRange, 0, (n+size-1)/size)
	for first := 1; first <= n; first += size {
		out = append(out, extract.PageRange{First: first, Last: min(first+size-1, n)})
	}
	return out
}

// runWorkflow processes a PDF: as a workflow of RangeKind steps when it
// has more than RangePages pages, else as one job. A document job that
// spawned its steps already (it is running again once they have all
// finished, or after losing its lease) goes on with them.
//
// The job parses the first range, which tells it the page count: a PDF of
// no more pages is then done, as one job, with no parse but that one. Of a
// longer one the job finishes the first range as its step would (its
// chunks saved under the range's indexes, fenced by this job's lease) and
// spawns the steps, the first's result in its arguments: that step only
// records it.
func (j *job) runWorkflow(ctx context.Context) error {
	steps, err := j.task.Children(ctx)
	if err != nil {
		return err
	}
	if len(steps) > 0 {
		return j.resume(ctx, steps)
	}
	j.rng = &extract.PageRange{First: 1, Last: j.p.cfg.RangePages}
	if err := j.process(ctx, nil); err != nil {
		return err
	}
	if j.total <= j.p.cfg.RangePages {
		j.rng = nil // the range was the whole document
		return j.finish(ctx)
	}
	if int64(j.total)*chunkStride > math.MaxInt32 { // chunk indexes are 32 bits in PostgreSQL
		_ = j.chunks.Close()
		return rejected(fmt.Errorf("pdf: %d pages: %w", j.total, extract.ErrTooLarge))
	}
	first, err := j.finishRange(ctx)
	if err != nil {
		return err
	}
	return j.spawn(ctx, j.total, first)
}

// spawn starts a step per range of the document's n pages, the first with
// its result (first) found already, and waits for them.
func (j *job) spawn(ctx context.Context, n int, first json.RawMessage) error {
	rs := ranges(n, j.p.cfg.RangePages)
	steps := make([]*queue.Step, len(rs))
	for i, r := range rs {
		args := RangeArgs{DocumentID: j.docID, FirstPage: r.First, LastPage: r.Last}
		cost := max(1, j.task.Job.Cost*(r.Last-r.First+1)/n) // the document's, shared by pages
		if i == 0 {
			args.Result, cost = first, 1 // done: this job's cost paid for it
		}
		steps[i] = &queue.Step{Name: stepName(r.First, r.Last), EnqueueParams: queue.EnqueueParams{
			Kind: RangeKind, Args: args,
			MaxAttempts: j.task.Job.MaxAttempts, Priority: j.task.Job.Priority, Cost: cost,
		}}
	}
	msg := fmt.Sprintf("parsing %d pages in %d ranges", n, len(rs))
	if err := j.progress.enter(ctx, StageParsing, msg, nil); err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	if _, err := j.task.Spawn(ctx, steps...); err != nil {
		return err
	}
	return queue.AwaitChildren()
}

// resume goes on with the document's steps: it waits while any is
// unfinished, fails when one failed or was cancelled, and otherwise merges
// their results and completes the document.
func (j *job) resume(ctx context.Context, steps []*queue.Job) error {
	results := make([]*RangeResult, 0, len(steps))
	for _, s := range steps {
		switch s.State {
		case queue.StateCompleted:
		case queue.StateFailed:
			return queue.Permanent(fmt.Errorf("%s (step %s)", s.ErrorMessage, s.StepName()))
		case queue.StateCancelled:
			return queue.Permanent(fmt.Errorf("step %s cancelled", s.StepName()))
		default:
			return queue.AwaitChildren()
		}
		var r RangeResult
		if err := json.Unmarshal(s.Result, &r); err != nil {
			return queue.Permanent(fmt.Errorf("step %s: result: %w", s.StepName(), err))
		}
		results = append(results, &r)
	}
	if err := j.progress.enter(ctx, StageAnalyzing, fmt.Sprintf("merging %d ranges", len(results)), nil); err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	j.merge(results)
	if err := j.dropStale(ctx); err != nil {
		return err
	}
	j.early = earlyOverview(j.analysis).withFields(j.fields)
	j.early.ChunkCount = j.nchunk
	if err := j.progress.found(ctx, 2, 3, "saving results", j.early.encode()); err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	return j.save(ctx)
}

// dropStale deletes the document's chunks past its last page's indexes:
// what an earlier run of it left that no range replaced.
func (j *job) dropStale(ctx context.Context) error {
	from := j.fields.PageCount * chunkStride
	err := j.p.cfg.Store.InTenant(ctx, j.tenant, func(tx docket.Tx) error {
		if err := tx.ChunkDeleteIndexes(ctx, j.docID, from, math.MaxInt32); err != nil {
			return notFound(err, j.docID, "delete stale chunks")
		}
		return j.task.FenceTx(ctx, tx.Native())
	})
	if err != nil && !errors.Is(err, queue.ErrLeaseLost) {
		return fmt.Errorf("delete stale chunks: %w", err)
	}
	return err
}

// workRange processes a RangeKind job: its pages' chunks replace those an
// earlier attempt saved, and its result is what the document job merges.
func (p *Processor) workRange(ctx context.Context, t *queue.Task) error {
	var args RangeArgs
	if err := json.Unmarshal(t.Job.Args, &args); err != nil {
		return queue.Permanent(fmt.Errorf("rejected_input: decode args: %w", err))
	}
	if args.DocumentID == "" || args.FirstPage < 1 || args.LastPage < args.FirstPage {
		return queue.Permanent(fmt.Errorf("rejected_input: args: document %q, pages %d-%d", args.DocumentID, args.FirstPage, args.LastPage))
	}
	j := &job{p: p, task: t, tenant: t.Job.TenantID, docID: args.DocumentID, progress: newReporter(t),
		rng: &extract.PageRange{First: args.FirstPage, Last: args.LastPage}}
	if err := j.readDocument(ctx); err != nil {
		return err
	}
	if j.typ != extract.TypePDF {
		return queue.Permanent(fmt.Errorf("rejected_input: document %s is %s: only a PDF has page ranges", j.docID, j.typ))
	}
	if len(args.Result) > 0 { // the document job did this range
		t.SetResult(args.Result)
		return nil
	}
	if err := j.process(ctx, nil); err != nil {
		return err
	}
	res, err := j.finishRange(ctx)
	if err != nil {
		return err
	}
	t.SetResult(res)
	return j.progress.failed()
}

// finishRange splits, embeds and saves the range parsed, and returns its
// result.
func (j *job) finishRange(ctx context.Context) (json.RawMessage, error) {
	defer func() { _ = j.chunks.Close() }()
	for _, step := range []func(context.Context) error{j.split, j.embed} {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	if j.nchunk == 0 { // no batch replaced an earlier attempt's
		if err := j.saveNoChunks(ctx); err != nil {
			return nil, err
		}
	}
	res, err := json.Marshal(j.rangeResult())
	if err != nil {
		return nil, fmt.Errorf("range result: %w", err)
	}
	return res, nil
}

// saveNoChunks deletes the chunks an earlier attempt of a step without any
// saved, fenced by its lease.
func (j *job) saveNoChunks(ctx context.Context) error {
	from, to := j.indexes()
	err := j.p.cfg.Store.InTenant(ctx, j.tenant, func(tx docket.Tx) error {
		if err := tx.ChunkDeleteIndexes(ctx, j.docID, from, to); err != nil {
			return notFound(err, j.docID, "delete the range's chunks")
		}
		return j.task.FenceTx(ctx, tx.Native())
	})
	if err != nil && !errors.Is(err, queue.ErrLeaseLost) {
		return fmt.Errorf("delete the range's chunks: %w", err)
	}
	return err
}

// rangeResult is what a step found.
func (j *job) rangeResult() *RangeResult {
	return &RangeResult{
		First: j.rng.First, Last: j.rng.Last, Chunks: j.nchunk, Dimensions: j.dims, Active: j.active,
		Warnings: j.warns, Fields: *fieldsOf(j.analysis),
	}
}

// embeddingDims is the vectors' length the document's fields record.
func embeddingDims(e embedding.Embedder, dims int) int {
	if dims > 0 {
		return dims
	}
	return e.Dimensions()
}
