package pipeline_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/internal/storepair"
	"github.com/docketq/docket/pipeline"
	"github.com/docketq/docket/pipeline/extract"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
	"github.com/docketq/docket/queue/sqlite"
)

// Tenants every env has.
const (
	tenantA = "acme"
	tenantB = "globex"
)

// waitLimit bounds every wait of a test: the first PDF of a machine may
// compile PDFium (seconds).
const waitLimit = time.Minute

// store is what both drivers are: the job engine's driver and the
// document store, over one database.
type store interface {
	docket.Store
	driver.Driver
}

// Backends names the drivers the end-to-end tests run on.
var backends = []string{"sqlite", "postgres"}

// env is a real store, local blobs and a worker running a Processor.
type env struct {
	tb     testing.TB
	ctx    context.Context
	db     store
	blobs  *blob.Local
	client *queue.Client
}

// forEachBackend runs fn as a parallel subtest per backend.
func forEachBackend(t *testing.T, fn func(t *testing.T, backend string)) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			fn(t, b)
		})
	}
}

// open returns a fresh, migrated store of backend, closed when the test
// ends.
func open(tb testing.TB, backend string) store {
	tb.Helper()
	ctx := context.Background()
	var db interface {
		store
		Close() error
	}
	var err error
	switch backend {
	case "sqlite":
		var d *sqlite.Driver
		if d, err = sqlite.Open(ctx, storepair.SQLitePath(tb)); err == nil {
			s := storepair.NewSQLite(d)
			db, err = s, s.Migrate(ctx)
		}
	case "postgres":
		var d *postgres.Driver
		if d, err = postgres.Open(ctx, pgtest.NewDatabase(tb)); err == nil { // migrated by TestMain's template
			db = storepair.NewPostgres(d)
		}
	default:
		tb.Fatalf("unknown backend %q", backend)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// setup opens a store of backend with two tenants and runs a worker with a
// Processor made of cfg (Store and Blobs filled in) until the test ends.
func setup(tb testing.TB, backend string, cfg pipeline.Config) *env {
	tb.Helper()
	e, cfg := setupStore(tb, backend, cfg)
	e.startWorker(cfg)
	return e
}

// setupStore is setup without a worker: it returns the env and cfg with
// its Store and Blobs filled in.
func setupStore(tb testing.TB, backend string, cfg pipeline.Config) (*env, pipeline.Config) {
	tb.Helper()
	ctx := context.Background()
	db := open(tb, backend)
	for _, id := range []string{tenantA, tenantB} {
		p := &docket.TenantCreateParams{ID: id, Name: id, Plan: docket.PlanPro}
		if _, err := db.TenantCreate(ctx, p); err != nil {
			tb.Fatal(err)
		}
	}
	blobs, err := blob.NewLocal(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	cfg.Store, cfg.Blobs = db, blobs
	return &env{tb: tb, ctx: ctx, db: db, blobs: blobs, client: queue.NewClient(db, queue.ClientConfig{Logger: quiet()})}, cfg
}

func (e *env) startWorker(cfg pipeline.Config) { e.startWorkerWith(cfg, nil) }

// startWorkerWith runs a worker of a Processor made of cfg, its config
// changed by tweak unless nil, until the test ends or stop is called;
// stop returns once the worker's Run has.
func (e *env) startWorkerWith(cfg pipeline.Config, tweak func(*queue.WorkerConfig)) (stop func()) {
	proc, err := pipeline.NewProcessor(cfg)
	if err != nil {
		e.tb.Fatal(err)
	}
	wcfg := queue.WorkerConfig{
		Queues:       map[string]queue.QueueConfig{pipeline.Queue: {MaxWorkers: 2}},
		Handlers:     proc.Handlers(),
		PollInterval: 10 * time.Millisecond,
		Backoff:      func(int) time.Duration { return 10 * time.Millisecond },
		Maintenance:  queue.MaintenanceConfig{ElectInterval: 20 * time.Millisecond, ScheduleInterval: 20 * time.Millisecond},
		Logger:       quiet(),
		Hooks:        queue.Hooks{Finished: proc.Finished},
	}
	if tweak != nil {
		tweak(&wcfg)
	}
	w, err := queue.NewWorker(e.client, wcfg)
	if err != nil {
		e.tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				e.tb.Errorf("worker: %v", err)
			}
		})
	}
	e.tb.Cleanup(stop)
	return stop
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// upload stores data as a new document of tenant and enqueues its job in
// the same transaction, as the HTTP API does. It returns the document's id
// and the job's.
func (e *env) upload(tenant string, typ extract.Type, data []byte) (string, int64) {
	e.tb.Helper()
	doc := e.storeBlob(tenant, typ, data)
	err := e.db.InTenant(e.ctx, tenant, func(tx docket.Tx) error {
		res, err := e.enqueueTx(tx, doc.ID)
		if err != nil {
			return err
		}
		doc.JobID = res.Job.ID
		return tx.DocumentInsert(e.ctx, doc)
	})
	if err != nil {
		e.tb.Fatal(err)
	}
	return doc.ID, doc.JobID
}

// storeBlob puts data in blob storage and returns its document, unsaved.
func (e *env) storeBlob(tenant string, typ extract.Type, data []byte) *docket.Document {
	e.tb.Helper()
	id := newID()
	key := tenant + "/" + id + "/" + newID()
	if _, err := e.blobs.Put(e.ctx, key, bytes.NewReader(data)); err != nil {
		e.tb.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return &docket.Document{ID: id, Filename: "file." + string(typ), ContentType: typ.MIME(),
		Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), BlobKey: key}
}

// enqueueTx enqueues a job for docID in tx's tenant.
func (e *env) enqueueTx(tx docket.Tx, docID string) (*queue.InsertResult, error) {
	return e.client.EnqueueTx(e.ctx, tx.Native(), &queue.EnqueueParams{
		Queue: pipeline.Queue, Kind: pipeline.Kind, TenantID: tx.TenantID(),
		Args: docket.DocumentArgs{DocumentID: docID},
	})
}

// wait polls the job until it is finished, within waitLimit.
func (e *env) wait(id int64) *queue.Job {
	e.tb.Helper()
	deadline := time.Now().Add(waitLimit)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		job, err := e.client.Get(e.ctx, id)
		if err != nil {
			e.tb.Fatal(err)
		}
		if job.State.Finished() {
			return job
		}
		if time.Now().After(deadline) {
			e.tb.Fatalf("job %d still %s (%s %d%%) after %s", id, job.State, job.Stage, job.Progress, waitLimit)
		}
	}
	return nil
}

// document reads a document and its chunks in tenant.
func (e *env) document(tenant, id string) (*docket.Document, []*docket.Chunk) {
	e.tb.Helper()
	var doc *docket.Document
	var chunks []*docket.Chunk
	err := e.db.ReadTenant(e.ctx, tenant, func(tx docket.Tx) error {
		var err error
		if doc, err = tx.DocumentGet(e.ctx, id); err != nil {
			return err
		}
		chunks, err = tx.ChunkList(e.ctx, &docket.ChunkListParams{DocumentID: id})
		return err
	})
	if err != nil {
		e.tb.Fatal(err)
	}
	return doc, chunks
}

// attempts returns how many attempts the job has run.
func (e *env) attempts(id int64) int {
	e.tb.Helper()
	as, err := e.client.Attempts(e.ctx, id)
	if err != nil {
		e.tb.Fatal(err)
	}
	return len(as)
}
