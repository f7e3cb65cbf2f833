package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/docketq/docket"
	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/dispatch"
	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/foreground"
	"github.com/docketq/docket/ops"
	"github.com/docketq/docket/pipeline"
	"github.com/docketq/docket/pipeline/extract"
	"github.com/docketq/docket/pipeline/sandbox"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
)

// serviceFlags configure the document service: blobs, embeddings, workers.
type serviceFlags struct {
	blobURL        string
	embedURL       string
	embedModel     string
	embedKey       string
	embedDims      int
	concurrency    int
	grace          time.Duration
	lease          time.Duration
	maxUploadBytes int64
	parseMemory    int64 // --parse-memory-bytes: extract.Budget of this process
	sandbox        bool  // --sandbox: parse in child processes (pipeline/sandbox)
	sandboxMemory  int64 // --sandbox-memory-bytes: one child's memory limit
	sandboxCPU     time.Duration
	rangePages     int  // --range-pages: pipeline.Config.RangePages
	allowAsync     bool // --allow-async-commit: start on synchronous_commit = off (checkPostgres)
	ocr            ocrFlags
	dispatch       dispatchFlags
	env            envFlags
}

func (f *serviceFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&f.blobURL, "blob-url", getenv("DOCKET_BLOB_URL"),
		"where uploaded files go: a directory, file://DIR, s3://bucket[/prefix]?endpoint=... or azblob://container[/prefix]; default <data-dir>/blobs [DOCKET_BLOB_URL]")
	fs.StringVar(&f.embedURL, "embedding-url", getenv("DOCKET_EMBEDDING_URL"),
		"OpenAI-compatible embeddings server (OpenAI, Ollama, vLLM); empty uses the local hashing embedder [DOCKET_EMBEDDING_URL]")
	fs.StringVar(&f.embedModel, "embedding-model", getenv("DOCKET_EMBEDDING_MODEL"),
		"embedding model, required with --embedding-url [DOCKET_EMBEDDING_MODEL]")
	fs.StringVar(&f.embedKey, "embedding-api-key", getenv("DOCKET_EMBEDDING_API_KEY"),
		"API key for the embeddings server [DOCKET_EMBEDDING_API_KEY]")
	f.env = envFlags{fs: fs, getenv: getenv}
	e := &f.env
	e.intVar(&f.embedDims, "embedding-dimensions", "DOCKET_EMBEDDING_DIMENSIONS", 0, "vector dimensions (0: the embedder's default)")
	e.intVar(&f.concurrency, "concurrency", "DOCKET_CONCURRENCY", 4, "documents this process works on at once")
	e.durationVar(&f.grace, "shutdown-grace", "DOCKET_SHUTDOWN_GRACE", 30*time.Second, "time running jobs get to finish on SIGTERM")
	e.durationVar(&f.lease, "lease", "DOCKET_LEASE", 30*time.Second, "how long a job stays claimed without a heartbeat; a killed worker's jobs run again after it")
	e.int64Var(&f.maxUploadBytes, "max-upload-bytes", "DOCKET_MAX_UPLOAD_BYTES", 100<<20, "largest file accepted by upload")
	e.int64Var(&f.parseMemory, "parse-memory-bytes", "DOCKET_PARSE_MEMORY_BYTES", extract.DefaultMemoryBudget,
		"memory the document parses of this process may hold at once, each reckoned at its worst case "+
			"(a PDF at about 640 MiB); a parse waits for its share, and after a minute its job runs again later")
	e.boolVar(&f.sandbox, "sandbox", "DOCKET_SANDBOX", true,
		"parse and analyse documents in child processes under memory, CPU-time and wall-clock limits "+
			"the operating system enforces; off parses in this process, bounded by the parsers' own limits")
	e.int64Var(&f.sandboxMemory, "sandbox-memory-bytes", "DOCKET_SANDBOX_MEMORY_BYTES", sandbox.DefaultMemoryLimit,
		"memory one document's child process may use (address space and resident); "+
			"--parse-memory-bytes / this is how many documents are parsed at once")
	e.durationVar(&f.sandboxCPU, "sandbox-cpu", "DOCKET_SANDBOX_CPU", sandbox.DefaultCPULimit,
		"CPU time one document may use to be parsed and analysed; past it the document fails as too_slow")
	e.intVar(&f.rangePages, "range-pages", "DOCKET_RANGE_PAGES", pipeline.DefaultRangePages,
		"a PDF of more pages is processed in ranges of this many, each a job of its own (a workflow step); 0: one job a document")
	e.boolVar(&f.allowAsync, "allow-async-commit", "DOCKET_ALLOW_ASYNC_COMMIT", false,
		"start on a PostgreSQL whose sessions run with synchronous_commit = off, logging an error, "+
			"instead of refusing: a crash of the server can then lose jobs it acknowledged")
	f.ocr.register(e)
	f.dispatch.register(e)
}

func (f *serviceFlags) check() error {
	if err := f.env.err(); err != nil {
		return err
	}
	switch {
	case f.concurrency < 1 || f.concurrency > 1000:
		return fmt.Errorf("--concurrency %d: want 1 to 1000", f.concurrency)
	case f.parseMemory < 1<<20:
		return fmt.Errorf("--parse-memory-bytes %d: want at least 1 MiB", f.parseMemory)
	case f.sandboxMemory < 64<<20 || f.sandboxMemory > f.parseMemory:
		return fmt.Errorf("--sandbox-memory-bytes %d: want 64 MiB to --parse-memory-bytes (%d)", f.sandboxMemory, f.parseMemory)
	case f.rangePages < 0:
		return fmt.Errorf("--range-pages %d: want 0 or more", f.rangePages)
	case f.sandboxCPU < time.Second:
		return fmt.Errorf("--sandbox-cpu %s: want at least 1s", f.sandboxCPU)
	case f.maxUploadBytes < 1:
		return fmt.Errorf("--max-upload-bytes %d: want a positive size", f.maxUploadBytes)
	case f.lease < time.Second:
		return fmt.Errorf("--lease %s: want at least 1s", f.lease)
	case f.grace < 0:
		return fmt.Errorf("--shutdown-grace %s: want a duration >= 0", f.grace)
	}
	if err := f.ocr.check(); err != nil {
		return err
	}
	return f.dispatch.check()
}

// service is the document service's parts, opened from flags.
type service struct {
	driver    driver.Driver
	store     docket.Store
	client    *queue.Client
	blobs     blob.Store
	embedder  embedding.Embedder
	processor *pipeline.Processor
	sandbox   *sandbox.Pool        // of the processor; nil with --sandbox=false
	disp      *dispatch.Dispatcher // of --dispatch-config, made by worker; nil for none
	metrics   *ops.Metrics
	// foreground counts the API's requests in progress, for the pipeline's
	// saves to wait on (embedded SQLite only); nil for none.
	foreground *foreground.Gate
	tracer     trace.TracerProvider // of job spans; nil: otel's global one
	logger     *slog.Logger
}

// openService opens the store, blobs and embedder the flags name.
func openService(ctx context.Context, sf *storeFlags, vf *serviceFlags, logger *slog.Logger) (*service, error) {
	if err := vf.check(); err != nil {
		return nil, err
	}
	emb, err := embedding.FromConfig(embedding.Config{URL: vf.embedURL, Model: vf.embedModel, APIKey: vf.embedKey, Dimensions: vf.embedDims})
	if err != nil {
		return nil, fmt.Errorf("embedding: %w", err)
	}
	blobURL := vf.blobURL
	if blobURL == "" {
		blobURL = filepath.Join(sf.dataDir, "blobs")
	}
	blobs, err := blob.Open(ctx, blobURL)
	if err != nil {
		return nil, err
	}
	if err := checkBlobs(ctx, blobs, blobURL); err != nil {
		return nil, err
	}
	// serve and worker run for long: they wait out a database that refuses
	// for now rather than exit into a supervisor's restart loop.
	sf.waitReady = func(err error, wait time.Duration) {
		logger.Warn("database not ready; retrying", "err", err, "in", wait)
	}
	sf.checkPG = func(ctx context.Context, d *postgres.Driver) error {
		return checkPostgres(ctx, d, vf.allowAsync, logger)
	}
	d, err := sf.open(ctx)
	if err != nil {
		return nil, err
	}
	store, ok := documents(d)
	if !ok {
		_ = d.Close()
		return nil, errors.New("the store does not keep documents")
	}
	pcfg := pipeline.Config{Store: store, Blobs: blobs, Embedder: emb, Logger: logger, RangePages: vf.rangePages,
		Extract: extract.Options{Budget: extract.NewBudget(extract.BudgetConfig{Bytes: vf.parseMemory}),
			OCR: vf.ocr.config(ctx, logger)}}
	var gate *foreground.Gate
	if sf.embedded() {
		pcfg.SaveYield = 1 // SQLite's one writer: a long document leaves it free half the time,
		// in transactions of about sqliteSaveHold each, and its batches wait for the requests
		// in progress (the API shares this process). Without the yield the turns alone let
		// other tenants' writes go first, but the saving took the cores: an upload's p99 rose
		// 5.5 times under attack, not 2.4-3.3 times.
		pcfg.SaveHold = sqliteSaveHold
		gate = new(foreground.Gate)
		pcfg.Foreground = gate
	}
	if vf.sandbox {
		if pcfg.Sandbox, err = sandbox.NewPool(sandbox.Config{
			Procs:       int(max(1, vf.parseMemory/vf.sandboxMemory)),
			MemoryLimit: vf.sandboxMemory, CPULimit: vf.sandboxCPU, Logger: logger,
		}); err != nil {
			_ = d.Close()
			return nil, err
		}
	}
	proc, err := pipeline.NewProcessor(pcfg)
	if err != nil {
		_ = d.Close()
		return nil, err
	}
	return &service{
		driver: d, store: store, client: queue.NewClient(d, queue.ClientConfig{Logger: logger, Metadata: ops.TraceMetadata}),
		blobs: blobs, embedder: emb, processor: proc, sandbox: pcfg.Sandbox, metrics: ops.NewMetrics(), logger: logger, foreground: gate,
	}, nil
}

// sqliteSaveHold is about the longest a transaction of a document's
// chunks holds SQLite's one writer in serve: a request's write waits for
// one such transaction at most (its turn comes before the next; the
// writer's turns in queue/sqlite). A 64-chunk batch's transaction held it
// 12 ms at the median under load. The cost is the long document's: a
// 12 MiB text alone took 13.1-13.6 s instead of 12.0-12.1 s.
const sqliteSaveHold = 3 * time.Millisecond

// worker returns the job runtime for document jobs: each attempt traced
// (a span per attempt, to s.tracer), logged (one line) and counted in the
// metrics.
func (s *service) worker(vf *serviceFlags) (*queue.Worker, error) {
	handlers := s.processor.Handlers() // documents and the page ranges of long PDFs
	for kind, hc := range handlers {
		hc.Handler = ops.Traced(s.tracer, hc.Handler)
		handlers[kind] = hc
	}
	hooks := queue.Hooks{Finished: s.processor.Finished} // logs failed documents
	cfg := queue.WorkerConfig{
		Queues:        map[string]queue.QueueConfig{pipeline.Queue: {MaxWorkers: vf.concurrency}},
		Handlers:      handlers,
		ShutdownGrace: vf.grace,
		LeaseDuration: vf.lease,
		Logger:        s.logger,
		Hooks:         s.metrics.Hooks(ops.LogAttempts(s.logger, hooks)),
	}
	if err := s.addDispatch(&cfg, &vf.dispatch); err != nil { // dispatch.go
		return nil, err
	}
	return queue.NewWorker(s.client, cfg)
}

func (s *service) Close() error {
	if s.sandbox != nil {
		_ = s.sandbox.Close() // its children: nothing of theirs to keep
	}
	return s.driver.Close()
}
