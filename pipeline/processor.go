package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/foreground"
	"github.com/docketq/docket/pipeline/chunk"
	"github.com/docketq/docket/pipeline/extract"
	"github.com/docketq/docket/pipeline/sandbox"
	"github.com/docketq/docket/queue"
)

// Defaults for Config fields left zero.
const (
	DefaultTimeout    = 10 * time.Minute
	DefaultEmbedBatch = 32
	DefaultSaveBatch  = 64
	// DefaultForegroundWait is Config.ForegroundWait's default.
	DefaultForegroundWait = 100 * time.Millisecond
	DefaultBusyDelay      = 30 * time.Second
	// DefaultRangePages is the service's Config.RangePages.
	DefaultRangePages = 32
)

// Config configures a Processor.
type Config struct {
	// Store holds documents and chunks; required. Its driver must be the
	// one the worker runs on, so that CompleteTx joins its transaction.
	Store docket.Store
	// Blobs holds the documents' bytes; required.
	Blobs blob.Store
	// Embedder computes chunk vectors. Default: embedding.NewHashing with
	// embedding.DefaultDimensions (deterministic, local, no network).
	Embedder embedding.Embedder
	// Extract sets the parser's limits, PDF engine and memory budget (zero
	// fields take extract's defaults; nil PDF uses extract.DefaultPDFEngine,
	// nil Budget the process-wide extract.DefaultBudget). Its Progress hook
	// is replaced by the processor's own.
	Extract extract.Options
	// Sandbox, when set, parses and analyses every document in one of its
	// child processes, under the limits the operating system enforces
	// (memory, CPU time, wall clock); nil does it in this process, bounded
	// by Extract's limits only. Extract's Budget and PDF engine apply in
	// process only: a sandbox's children have their own.
	Sandbox *sandbox.Pool
	// BusyDelay is how long a job waits before running again when its parse
	// was not admitted by the memory budget in time (extract.ErrBusy); it
	// spends no attempt (queue.Snooze). Default DefaultBusyDelay.
	BusyDelay time.Duration
	// Chunk sets how text is split. Zero: the chunk package's defaults
	// (800 runes, 15% overlap). Its Progress hook is replaced.
	Chunk chunk.Config
	// EmbedBatch is how many chunks go to one Embed call (default
	// DefaultEmbedBatch); progress is reported after each batch.
	EmbedBatch int
	// SaveBatch is how many chunks are saved in one transaction (default
	// DefaultSaveBatch): a document's chunks are embedded and saved a
	// batch at a time, so memory and each transaction's length stay
	// bounded whatever the chunk count.
	SaveBatch int
	// SaveYield is how long a job waits after saving a batch before the
	// next, as a multiple of the time the save took (0, the default: no
	// wait). On SQLite, 1 leaves the store's one writer free half the time
	// a long document saves, for other tenants' writes.
	SaveYield float64
	// SaveHold, when positive, is about the longest one transaction of a
	// document's chunks should hold the store: each batch is saved in as
	// many transactions as keep each near it, sized by the time the ones
	// before took per chunk. 0 (the default): a transaction per batch. On
	// SQLite, whose one writer every tenant shares, a request's write
	// then waits for a short transaction, not a whole batch.
	SaveHold time.Duration
	// Foreground, when set, makes each batch's save first wait, at most
	// ForegroundWait, until the server answers no request: a long
	// document's saving and the requests of every tenant then do not
	// share the cores and SQLite's writer at the same moment.
	Foreground *foreground.Gate
	// ForegroundWait bounds one wait for Foreground (default
	// DefaultForegroundWait).
	ForegroundWait time.Duration
	// Timeout is the hard limit of one job attempt
	// (queue.HandlerConfig.Timeout). Default DefaultTimeout (10m).
	Timeout time.Duration
	// Logger receives a line per processed document, and one per failed
	// attempt when the worker calls Finished. Default: discarded.
	Logger *slog.Logger
	// RangePages, when positive, is the most pages a PDF is processed
	// in as one job: a longer one is a workflow, a step (a RangeKind job)
	// per RangePages pages, each a job of its own (run at once as far as
	// the tenant's concurrency allows, retried alone). 0 keeps every
	// document one job. DefaultRangePages is the service's.
	RangePages int

	// parseHook, when set (tests only: export_test.go), is called with
	// the page range of every parse before it starts (zero: the whole
	// document); an error fails the parse with it.
	parseHook func(extract.PageRange) error
}

// Processor is the queue.Handler of document jobs and of the page-range
// steps of long PDFs. Register it under both kinds, Kind and RangeKind
// (Handlers). Safe for concurrent use.
type Processor struct {
	cfg Config
}

var _ queue.Handler = (*Processor)(nil)

// NewProcessor checks cfg, fills in its defaults and returns a Processor.
func NewProcessor(cfg Config) (*Processor, error) {
	switch {
	case cfg.Store == nil:
		return nil, fmt.Errorf("%w: pipeline: no store", docket.ErrInvalid)
	case cfg.Blobs == nil:
		return nil, fmt.Errorf("%w: pipeline: no blob store", docket.ErrInvalid)
	case cfg.EmbedBatch < 0 || cfg.SaveBatch < 0 || cfg.SaveYield < 0 || cfg.SaveHold < 0 || cfg.Timeout < 0 || cfg.BusyDelay < 0 || cfg.RangePages < 0:
		return nil, fmt.Errorf("%w: pipeline: negative batch size, timeout, busy delay or range", docket.ErrInvalid)
	}
	if _, err := chunk.Split(nil, cfg.Chunk); err != nil {
		return nil, fmt.Errorf("%w: pipeline: %w", docket.ErrInvalid, err)
	}
	if cfg.Embedder == nil {
		cfg.Embedder = embedding.NewHashing(embedding.DefaultDimensions)
	}
	if cfg.EmbedBatch == 0 {
		cfg.EmbedBatch = DefaultEmbedBatch
	}
	if cfg.ForegroundWait <= 0 {
		cfg.ForegroundWait = DefaultForegroundWait
	}
	if cfg.SaveBatch == 0 {
		cfg.SaveBatch = DefaultSaveBatch
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.BusyDelay == 0 {
		cfg.BusyDelay = DefaultBusyDelay
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Processor{cfg: cfg}, nil
}

// HandlerConfig returns the queue registration of the processor, with its
// timeout, for either of its kinds (Handlers registers both).
func (p *Processor) HandlerConfig() queue.HandlerConfig {
	return queue.HandlerConfig{Handler: p, Timeout: p.cfg.Timeout}
}

// Handlers returns the processor's registrations by kind (Kind and
// RangeKind), for queue.WorkerConfig.Handlers.
func (p *Processor) Handlers() map[string]queue.HandlerConfig {
	return map[string]queue.HandlerConfig{Kind: p.HandlerConfig(), RangeKind: p.HandlerConfig()}
}

// Finished logs the end of a document job's attempt that did not complete;
// set it as the worker's queue.Hooks.Finished. A document that failed for
// good is an error (with why), an attempt that will be retried a warning.
func (p *Processor) Finished(job *queue.Job, outcome queue.Outcome, _ error) {
	var (
		level slog.Level
		msg   string
	)
	switch {
	case job.Kind != Kind && job.Kind != RangeKind:
		return
	case outcome == queue.OutcomeFailed:
		level, msg = slog.LevelError, "document failed"
	case outcome == queue.OutcomeRetry:
		level, msg = slog.LevelWarn, "document attempt failed; will retry"
	default:
		return
	}
	p.cfg.Logger.Log(context.Background(), level, msg, "tenant_id", job.TenantID, "document_id", docket.DocumentIDOf(job),
		"job_id", job.ID, "attempt", job.Attempt, "max_attempts", job.MaxAttempts, "error", job.ErrorMessage)
}

// Work processes the document named by the job's arguments, in the job
// row's tenant, or with a RangeKind job a range of its pages. It
// implements queue.Handler.
func (p *Processor) Work(ctx context.Context, t *queue.Task) error {
	if t.Job.Kind == RangeKind {
		return p.workRange(ctx, t)
	}
	start := time.Now()
	var args docket.DocumentArgs
	if err := json.Unmarshal(t.Job.Args, &args); err != nil {
		return queue.Permanent(fmt.Errorf("rejected_input: decode args: %w", err))
	}
	if args.DocumentID == "" {
		return queue.Permanent(errors.New("rejected_input: args: no document_id"))
	}
	j := &job{p: p, task: t, tenant: t.Job.TenantID, docID: args.DocumentID,
		progress: newReporter(t)}
	if err := j.run(ctx); err != nil {
		return err
	}
	p.cfg.Logger.Info("document processed", "tenant_id", j.tenant, "document_id", j.docID,
		"job_id", t.Job.ID, "pages", j.analysis.PageCount, "chunks", j.nchunk,
		"duration_ms", time.Since(start).Milliseconds())
	return nil
}
