package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/pipeline/analyze"
	"github.com/docketq/docket/pipeline/chunk"
	"github.com/docketq/docket/pipeline/extract"
	"github.com/docketq/docket/pipeline/sandbox"
	"github.com/docketq/docket/queue"
)

// job is one attempt at processing one document: what each stage found,
// for the next.
type job struct {
	p        *Processor
	task     *queue.Task
	tenant   string // from the job row, never from the args
	docID    string
	progress *reporter

	doc    *docket.Document
	typ    extract.Type
	title  string
	active bool
	warns  []string
	pages  int             // how many the parse read (the range's, in a step)
	total  int             // how many a PDF has, whatever range was read
	chunks *sandbox.Chunks // read a batch at a time by embed, closed by run
	nchunk int             // how many chunks the document has
	dims   int             // of the vectors, once the first is computed
	// analysis is what the parse's analysis found; fields, the document's
	// fields made of it.
	analysis analyze.Fields
	fields   *docket.Fields
	early    Early // the partial result reported so far
	// rng, when set, is the page range this job (a step of a long PDF's
	// workflow) processes; nil for the whole document.
	rng *extract.PageRange
	// perChunk is how long saving a chunk has held the store, a moving
	// average over the transactions so far (Config.SaveHold).
	perChunk time.Duration
}

// run goes through the stages and stores the result. A PDF of more than
// Config.RangePages pages is processed as a workflow instead (runWorkflow).
func (j *job) run(ctx context.Context) error {
	if err := j.readDocument(ctx); err != nil {
		return err
	}
	if j.typ == extract.TypePDF && j.p.cfg.RangePages > 0 {
		return j.runWorkflow(ctx)
	}
	return j.runWhole(ctx, nil)
}

// runWhole processes the document read by readDocument in this job: its
// blob opened already (ra) or not (nil).
func (j *job) runWhole(ctx context.Context, ra *openBlob) error {
	if err := j.process(ctx, ra); err != nil {
		return err
	}
	return j.finish(ctx)
}

// finish splits, embeds, analyses and saves the document parsed whole.
func (j *job) finish(ctx context.Context) error {
	defer func() { _ = j.chunks.Close() }()
	for _, step := range []func(context.Context) error{j.split, j.embed, j.analyze} {
		if err := step(ctx); err != nil {
			return err
		}
		if err := j.progress.failed(); err != nil {
			return fmt.Errorf("progress: %w", err)
		}
	}
	return j.save(ctx)
}

// openBlob is a document's blob opened for random access.
type openBlob struct {
	blob.ReadAtCloser
	size int64
}

// process parses the document (its range, in a step) from ra, or from its
// blob opened now when ra is nil, and closes it.
func (j *job) process(ctx context.Context, ra *openBlob) error {
	if ra == nil {
		var err error
		if ra, err = j.download(ctx); err != nil {
			return err
		}
	}
	err := j.parse(ctx, ra, ra.size)
	_ = ra.Close() // read-only: nothing to lose
	return err
}

// readDocument reads the document in the job's tenant and checks its type
// and blob key.
func (j *job) readDocument(ctx context.Context) error {
	if err := j.progress.enter(ctx, StageDownloading, "reading document", nil); err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	err := j.p.cfg.Store.ReadTenant(ctx, j.tenant, func(tx docket.Tx) error {
		doc, err := tx.DocumentGet(ctx, j.docID)
		j.doc = doc
		return err
	})
	if err != nil {
		return notFound(err, j.docID, "read document")
	}
	if j.typ, err = typeOf(j.doc.ContentType); err != nil {
		return rejected(err)
	}
	if !strings.HasPrefix(j.doc.BlobKey, j.tenant+"/") {
		return queue.Permanent(fmt.Errorf("document %s: blob key outside tenant %s", j.docID, j.tenant))
	}
	return nil
}

// download opens the blob of the document readDocument read.
func (j *job) download(ctx context.Context) (*openBlob, error) {
	ra, size, err := blob.OpenReaderAt(ctx, j.p.cfg.Blobs, j.doc.BlobKey)
	if err != nil {
		switch {
		case errors.Is(err, blob.ErrInvalidKey):
			return nil, queue.Permanent(fmt.Errorf("document %s: %w", j.docID, err))
		case errors.Is(err, blob.ErrNotFound):
			// Retried: another worker may share the uploads' blob store.
			return nil, fmt.Errorf("open blob: %w: %s is not in this worker's blob store; "+
				"servers and workers on several hosts must share one (--blob-url s3://...)", err, j.doc.BlobKey)
		}
		return nil, fmt.Errorf("open blob: %w", err)
	}
	j.progress.update(ctx, 1, 1, fmt.Sprintf("opened %d bytes", size))
	return &openBlob{ReadAtCloser: ra, size: size}, nil
}

// parse extracts the text, page by page, and analyses it: in a child
// process of the sandbox when the processor has one.
func (j *job) parse(ctx context.Context, r io.ReaderAt, size int64) error {
	if err := j.progress.enter(ctx, StageParsing, "parsing "+string(j.typ), nil); err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	if hook := j.p.cfg.parseHook; hook != nil {
		if err := hook(j.pageRange()); err != nil {
			return err
		}
	}
	opts := j.p.cfg.Extract
	opts.Pages = j.pageRange()
	opts.Progress = func(done, total int) {
		j.progress.update(ctx, done, total, fmt.Sprintf("parsed %d of %d pages", done, total))
	}
	ch := sandbox.Chunking{Chunk: j.p.cfg.Chunk, Batch: j.p.cfg.SaveBatch}
	if h, ok := j.p.cfg.Embedder.(*embedding.Hashing); ok { // local: computed with the chunks
		ch.Dimensions = h.Dimensions()
	}
	chunking := false
	ch.Chunk.Progress = func(done, total int) {
		if !chunking {
			chunking = true
			_ = j.progress.enter(ctx, StageChunking, "splitting the text", nil) // a failure is kept in j.progress
		}
		j.progress.update(ctx, done, total, fmt.Sprintf("chunked %d of %d bytes", done, total))
	}
	var (
		res *sandbox.Result
		err error
	)
	if sb := j.p.cfg.Sandbox; sb != nil {
		res, err = sb.ProcessChunked(ctx, j.typ, r, size, opts, ch)
	} else {
		res, err = sandbox.InProcessChunked(ctx, j.typ, r, size, opts, ch)
	}
	if err := parseErr(err, j.p.cfg.BusyDelay); err != nil {
		return err
	}
	doc := res.Doc
	j.pages, j.total, j.title, j.active, j.analysis = len(doc.Pages), doc.PageCount, doc.Title, doc.ActiveContent, res.Fields
	j.chunks, j.nchunk = res.Chunks, res.Chunks.Count
	j.warns = append([]string{}, doc.Warnings...) // never nil once processed
	j.early = earlyOverview(res.Fields)
	return nil
}

// parseErr maps an error of the parse to the job's: later, without
// spending an attempt, when the memory budget had no room; at once for
// good when the input is at fault; else retried.
func parseErr(err error, busy time.Duration) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, extract.ErrBusy): // no memory for it now: later, no attempt spent
		return queue.Snooze(busy)
	case extract.Permanent(err):
		return rejected(err)
	}
	return fmt.Errorf("parse: %w", err)
}

// pageRange is the range of pages the job processes: all of them unless
// it is a step of a workflow.
func (j *job) pageRange() extract.PageRange {
	if j.rng == nil {
		return extract.PageRange{}
	}
	return *j.rng
}

// split reports the early results of parsing and the chunks' count: the
// parse split the text (in the sandbox's child when there is one, which
// sent the chunks, not the text).
func (j *job) split(ctx context.Context) error {
	msg := fmt.Sprintf("split %d pages into %d chunks", j.pages, j.nchunk)
	if err := j.progress.enter(ctx, StageChunking, msg, j.early.encode()); err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	return nil
}

// embed computes the chunks' vectors where the parse did not (an embedder
// other than embedding.Hashing), and saves them a batch (SaveBatch chunks)
// at a time, each batch in a transaction of its own fenced by the job's
// lease: memory holds one batch, however many chunks the document has, and
// no transaction of a long document holds SQLite's writer for long. Its
// start reports the chunk count with the early results.
func (j *job) embed(ctx context.Context) error {
	n := j.nchunk
	j.early.ChunkCount = n
	if err := j.progress.enter(ctx, StageEmbedding, fmt.Sprintf("embedding %d chunks", n), j.early.encode()); err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	for done := 0; ; {
		b, err := j.chunks.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("chunks: %w", err)
		}
		vecs := b.Vectors
		if vecs == nil {
			if vecs, err = j.embedBatch(ctx, done, b.Chunks); err != nil {
				return err
			}
		} else if err := j.checkDims(vecs); err != nil {
			return err
		}
		if err := j.saveBatch(ctx, done == 0, b.Chunks, vecs); err != nil {
			return err
		}
		done += len(b.Chunks)
		j.progress.update(ctx, done, n, fmt.Sprintf("embedded and saved %d of %d chunks", done, n))
	}
	return nil
}

// saveBatch saves a batch of chunks, first the document's (or range's)
// first, as background writes for the store (queue.WithBackgroundWrites):
// in one transaction, or with Config.SaveHold in as many as keep each
// near it. Before each transaction it waits for the server's requests
// (Config.Foreground), and after it yields the store (yieldStore).
func (j *job) saveBatch(ctx context.Context, first bool, batch []chunk.Chunk, vecs [][]float32) error {
	ctx = queue.WithBackgroundWrites(ctx)
	if first && j.p.cfg.SaveHold > 0 {
		if err := j.clearChunks(ctx); err != nil {
			return err
		}
	}
	for len(batch) > 0 {
		n := j.saveSize(len(batch))
		if err := j.p.cfg.Foreground.Wait(ctx, j.p.cfg.ForegroundWait); err != nil {
			return err
		}
		held, err := j.saveChunks(ctx, first, batch[:n], vecs[:n])
		if err != nil {
			return err
		}
		j.notePerChunk(held, n)
		if err := j.yieldStore(ctx, held); err != nil {
			return err
		}
		first, batch, vecs = false, batch[n:], vecs[n:]
	}
	return nil
}

// clearChunks deletes the chunks an earlier attempt saved of the job's
// (its indexes, from j.indexes), under Config.SaveHold: a window of
// indexes a transaction, fenced by the job's lease and sized by the time
// per chunk like the saves, so that a retried long document's thousands
// of chunks never go in one transaction that holds the store; each waits
// for the server's requests first, as the saves do. The first
// batch's save then replaces nothing more. Without SaveHold that save
// deletes them all itself.
func (j *job) clearChunks(ctx context.Context) error {
	from, to := j.indexes()
	for from < to {
		var next []*docket.Chunk
		err := j.p.cfg.Store.ReadTenant(ctx, j.tenant, func(tx docket.Tx) error {
			var err error
			next, err = tx.ChunkList(ctx, &docket.ChunkListParams{DocumentID: j.docID, From: from, Limit: 1})
			return err
		})
		if err != nil {
			return notFound(err, j.docID, "list the chunks to clear")
		}
		if len(next) == 0 || next[0].Index >= to {
			return nil
		}
		from = next[0].Index
		end := min(to, from+j.saveSize(math.MaxInt))
		if err := j.p.cfg.Foreground.Wait(ctx, j.p.cfg.ForegroundWait); err != nil {
			return err
		}
		var began time.Time
		err = j.p.cfg.Store.InTenant(ctx, j.tenant, func(tx docket.Tx) error {
			began = time.Now()
			if err := tx.ChunkDeleteIndexes(ctx, j.docID, from, end); err != nil {
				return notFound(err, j.docID, "clear chunks")
			}
			return j.task.FenceTx(ctx, tx.Native())
		})
		if err != nil {
			return err
		}
		held := time.Since(began)
		j.notePerChunk(held, end-from)
		if err := j.yieldStore(ctx, held); err != nil {
			return err
		}
		from = end
	}
	return nil
}

// notePerChunk adds a transaction that held the store for held while
// writing n chunks to the moving average of the time per chunk.
func (j *job) notePerChunk(held time.Duration, n int) {
	per := held / time.Duration(max(n, 1))
	if j.perChunk == 0 {
		j.perChunk = per
	} else { // one slow transaction moves it a quarter of the way
		j.perChunk = (3*j.perChunk + per) / 4
	}
}

// saveSize returns how many of the batch's left chunks the next
// transaction saves: all of them without Config.SaveHold; with it, as
// many as the time per chunk so far fits in it, but at least
// minSaveSlice.
func (j *job) saveSize(left int) int {
	hold := j.p.cfg.SaveHold
	switch {
	case hold <= 0:
		return left
	case j.perChunk <= 0:
		return min(left, minSaveSlice)
	}
	return min(left, max(minSaveSlice, int(hold/j.perChunk)))
}

// minSaveSlice is the fewest chunks a transaction saves under
// Config.SaveHold, and how many the first saves, before the time per
// chunk is known. A transaction's fixed cost (its commit's fsync: a few
// milliseconds on a loaded disk) counts in the time per chunk, so without
// a floor a slow disk would shrink transactions to a chunk each.
const minSaveSlice = 16

// yieldStore waits SaveYield times took, the time a transaction of chunks
// held the store, before the next: on SQLite, whose one writer every
// tenant shares, a long document then leaves room between its
// transactions for other tenants' writes (uploads), which would otherwise
// queue behind it.
func (j *job) yieldStore(ctx context.Context, took time.Duration) error {
	wait := time.Duration(float64(took) * j.p.cfg.SaveYield)
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(min(wait, maxSaveYield))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// maxSaveYield caps one wait of yieldStore.
const maxSaveYield = time.Second

// embedBatch returns the vectors of chunks, the first of which is number
// first, EmbedBatch to a call. Every vector has the length of the
// document's first.
func (j *job) embedBatch(ctx context.Context, first int, chunks []chunk.Chunk) ([][]float32, error) {
	e, size := j.p.cfg.Embedder, j.p.cfg.EmbedBatch
	out := make([][]float32, 0, len(chunks))
	for i := 0; i < len(chunks); i += size {
		texts := make([]string, 0, size)
		for _, c := range chunks[i:min(i+size, len(chunks))] {
			texts = append(texts, c.Text)
		}
		from, to := first+i, first+i+len(texts)-1
		vecs, err := e.Embed(ctx, texts)
		switch {
		case err != nil && embedding.IsPermanent(err):
			return nil, queue.Permanent(fmt.Errorf("embed chunks %d-%d: %w", from, to, err))
		case err != nil:
			return nil, fmt.Errorf("embed chunks %d-%d: %w", from, to, err)
		case len(vecs) != len(texts):
			return nil, queue.Permanent(fmt.Errorf("embed: %d vectors for %d texts: %w", len(vecs), len(texts), embedding.ErrBadResponse))
		}
		if err := j.checkDims(vecs); err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// checkDims checks that every vector has the length of the document's
// first.
func (j *job) checkDims(vecs [][]float32) error {
	for _, v := range vecs {
		if j.dims == 0 {
			j.dims = len(v)
		}
		if len(v) != j.dims {
			return queue.Permanent(fmt.Errorf("embed: vectors of different lengths: %w", embedding.ErrBadResponse))
		}
	}
	return nil
}

// analyze completes the document's fields and reports the first key
// phrases, dates and amounts with the early results, before the results
// are saved. Both reports are written at once (a stage change, a partial
// result): none is left pending when the final transaction (which, on
// SQLite, holds the only writer) begins.
func (j *job) analyze(ctx context.Context) error {
	if err := j.progress.enter(ctx, StageAnalyzing, "analyzing text", nil); err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	j.fields = fieldsOf(j.analysis)
	j.fields.ChunkCount = j.nchunk
	j.fields.EmbeddingModel = j.p.cfg.Embedder.Model()
	j.fields.EmbeddingDimensions = j.p.cfg.Embedder.Dimensions()
	if j.dims > 0 {
		j.fields.EmbeddingDimensions = j.dims
	}
	j.fields.ActiveContent = j.active
	j.early = j.early.withFields(j.fields)
	if err := j.progress.found(ctx, 2, 3, "saving results", j.early.encode()); err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	return nil
}
