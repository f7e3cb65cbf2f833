package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/pipeline"
	"github.com/docketq/docket/pipeline/chunk"
	"github.com/docketq/docket/pipeline/extract"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// embedFunc is an embedding.Embedder made of a function: the transport
// boundary, faked to fail on cue.
type embedFunc func(ctx context.Context, texts []string) ([][]float32, error)

func (f embedFunc) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return f(ctx, texts)
}
func (embedFunc) Model() string   { return embedding.HashingModel }
func (embedFunc) Dimensions() int { return embedding.DefaultDimensions }

var hashing = embedding.NewHashing(0)

func TestProcessor_EmbeddingErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		fail     error // the first call's error
		state    queue.State
		attempts int
		message  string
	}{
		{"permanent", fmt.Errorf("status 401: %w", embedding.ErrUnauthorized), queue.StateFailed, 1, "embedding: unauthorized"},
		{"transient", fmt.Errorf("status 503: %w", embedding.ErrUnavailable), queue.StateCompleted, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			e := setup(t, "sqlite", pipeline.Config{Embedder: embedFunc(func(ctx context.Context, texts []string) ([][]float32, error) {
				if calls.Add(1) == 1 {
					return nil, tt.fail
				}
				return hashing.Embed(ctx, texts)
			})})
			docID, jobID := e.upload(tenantA, extract.TypeText, []byte("Some text to embed."))
			job := e.wait(jobID)
			if job.State != tt.state || e.attempts(jobID) != tt.attempts || !strings.Contains(job.ErrorMessage, tt.message) {
				t.Fatalf("job %s after %d attempts: %q", job.State, e.attempts(jobID), job.ErrorMessage)
			}
			doc, chunks := e.document(tenantA, docID)
			if done := tt.state == queue.StateCompleted; (doc.Fields != nil) != done || (len(chunks) == 1) != done {
				t.Fatalf("document %+v with %d chunks", doc, len(chunks))
			}
		})
	}
}

// A job cancelled while it runs loses its lease: none of its results are
// stored.
func TestProcessor_LeaseLost(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, backend string) {
		started, release := make(chan struct{}), make(chan struct{})
		e := setup(t, backend, pipeline.Config{Embedder: embedFunc(func(ctx context.Context, texts []string) ([][]float32, error) {
			close(started)
			select {
			case <-release:
			case <-ctx.Done():
			}
			return hashing.Embed(ctx, texts)
		})})
		docID, jobID := e.upload(tenantA, extract.TypeText, []byte("Text that never gets stored."))
		<-started
		_, err := e.client.Cancel(e.ctx, jobID, tenantA)
		close(release)
		if err != nil {
			t.Fatal(err)
		}
		if job := e.wait(jobID); job.State != queue.StateCancelled {
			t.Fatalf("job %s: %q", job.State, job.ErrorMessage)
		}
		doc, chunks := e.document(tenantA, docID)
		if doc.Fields != nil || len(doc.Warnings) != 0 || len(chunks) != 0 {
			t.Fatalf("results stored for a cancelled job: %+v, %d chunks", doc, len(chunks))
		}
	})
}

func TestNewProcessor(t *testing.T) {
	t.Parallel()
	e := setup(t, "sqlite", pipeline.Config{})
	tests := []struct {
		name string
		cfg  pipeline.Config
		ok   bool
	}{
		{"defaults", pipeline.Config{Store: e.db, Blobs: e.blobs}, true},
		{"no store", pipeline.Config{Blobs: e.blobs}, false},
		{"no blobs", pipeline.Config{Store: e.db}, false},
		{"bad chunk config", pipeline.Config{Store: e.db, Blobs: e.blobs, Chunk: chunk.Config{Size: 10, Overlap: 10}}, false},
		{"negative batch", pipeline.Config{Store: e.db, Blobs: e.blobs, EmbedBatch: -1}, false},
		{"negative range", pipeline.Config{Store: e.db, Blobs: e.blobs, RangePages: -1}, false},
	}
	for _, tt := range tests {
		p, err := pipeline.NewProcessor(tt.cfg)
		if (err == nil) != tt.ok || err != nil && !errors.Is(err, docket.ErrInvalid) {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if tt.ok && p.HandlerConfig().Timeout != pipeline.DefaultTimeout {
			t.Errorf("%s: timeout %s", tt.name, p.HandlerConfig().Timeout)
		}
	}
}

// TestProcessor_SavesInBatches: a document's chunks are saved SaveBatch at
// a time as they are embedded, not all at its end: when the embedder is
// asked for the third batch's vectors, the first two batches are in the
// store already, while the job runs; the document then completes with
// every chunk, once.
func TestProcessor_SavesInBatches(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, backend string) {
		var (
			e       *env
			docID   atomic.Value
			calls   atomic.Int32
			visible = make(chan int, 1)
		)
		e = setup(t, backend, pipeline.Config{SaveBatch: 2, EmbedBatch: 2,
			Chunk: chunk.Config{Size: 40, Overlap: 0},
			Embedder: embedFunc(func(ctx context.Context, texts []string) ([][]float32, error) {
				if calls.Add(1) == 3 {
					_, chunks := e.document(tenantA, docID.Load().(string))
					visible <- len(chunks)
				}
				return hashing.Embed(ctx, texts)
			})})
		text := strings.Repeat("Batches of chunks are saved as they are embedded. ", 12)
		doc := e.storeBlob(tenantA, extract.TypeText, []byte(text))
		docID.Store(doc.ID)
		err := e.db.InTenant(e.ctx, tenantA, func(tx docket.Tx) error {
			res, err := e.enqueueTx(tx, doc.ID)
			if err != nil {
				return err
			}
			doc.JobID = res.Job.ID
			return tx.DocumentInsert(e.ctx, doc)
		})
		if err != nil {
			t.Fatal(err)
		}
		if job := e.wait(doc.JobID); job.State != queue.StateCompleted {
			t.Fatalf("job %s: %s", job.State, job.ErrorMessage)
		}
		if n := <-visible; n != 4 {
			t.Errorf("%d chunks saved before the third batch was embedded, want 4", n)
		}
		got, chunks := e.document(tenantA, doc.ID)
		if got.Fields == nil || got.Fields.ChunkCount != len(chunks) || len(chunks) < 6 {
			t.Fatalf("%d chunks, fields %+v", len(chunks), got.Fields)
		}
		for i, c := range chunks {
			if c.Index != i {
				t.Fatalf("chunk %d has index %d", i, c.Index)
			}
		}
	})
}

// bgCounter is a store that counts the transactions begun as background
// writes (queue.WithBackgroundWrites).
type bgCounter struct {
	docket.Store
	n               atomic.Int32
	deletes, widest atomic.Int64
}

func (s *bgCounter) InTenant(ctx context.Context, tenantID string, fn func(tx docket.Tx) error) error {
	if driver.BackgroundWrites(ctx) {
		s.n.Add(1)
	}
	return s.Store.InTenant(ctx, tenantID, func(tx docket.Tx) error { return fn(&deleteCounter{tx, s}) })
}

// deleteCounter is a transaction that records the widest window of
// indexes ChunkDeleteIndexes was given, and how often it was called.
type deleteCounter struct {
	docket.Tx
	s *bgCounter
}

func (t *deleteCounter) ChunkDeleteIndexes(ctx context.Context, documentID string, from, to int) error {
	t.s.deletes.Add(1)
	for {
		w := t.s.widest.Load()
		if int64(to-from) <= w || t.s.widest.CompareAndSwap(w, int64(to-from)) {
			break
		}
	}
	return t.Tx.ChunkDeleteIndexes(ctx, documentID, from, to)
}

// TestProcessor_SaveHold: with SaveHold, a batch of chunks is saved in
// transactions sized by the time per chunk, never under minSaveSlice (16)
// chunks (so 16 each, with a hold shorter than any chunk's save), all as
// background writes, and the document ends with every chunk once, in
// order. Without it, a batch is one transaction.
func TestProcessor_SaveHold(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, backend string) {
		for _, hold := range []time.Duration{0, time.Nanosecond} {
			e, cfg := setupStore(t, backend, pipeline.Config{SaveBatch: 64, SaveHold: hold,
				Chunk: chunk.Config{Size: 40, Overlap: 0}})
			counter := &bgCounter{Store: cfg.Store}
			cfg.Store = counter
			stop := e.startWorkerWith(cfg, nil)
			text := strings.Repeat("Each chunk is saved in a transaction sized by time. ", 30)
			docID, jobID := e.upload(tenantA, extract.TypeText, []byte(text))
			if job := e.wait(jobID); job.State != queue.StateCompleted {
				t.Fatalf("hold %v: job %s: %s", hold, job.State, job.ErrorMessage)
			}
			stop()
			_, chunks := e.document(tenantA, docID)
			for i, c := range chunks {
				if c.Index != i {
					t.Fatalf("hold %v: chunk %d has index %d", hold, i, c.Index)
				}
			}
			want := int32(1)
			if hold > 0 {
				want = int32((len(chunks) + 15) / 16)
			}
			if len(chunks) <= 32 || len(chunks) > 64 || counter.n.Load() != want {
				t.Errorf("hold %v: %d chunks saved in %d background transactions, want 33-64 in %d",
					hold, len(chunks), counter.n.Load(), want)
			}
		}
	})
}

// TestProcessor_SaveHoldClears: a document processed again (a retry, a
// reprocess) with SaveHold first clears its earlier chunks a window of
// indexes a transaction, sized like the saves (16, the least, with a hold
// shorter than any chunk's delete), never all of them in the first
// batch's transaction; it ends with every chunk once, in order.
func TestProcessor_SaveHoldClears(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, backend string) {
		e, cfg := setupStore(t, backend, pipeline.Config{SaveBatch: 64, SaveHold: time.Nanosecond,
			Chunk: chunk.Config{Size: 40, Overlap: 0}})
		counter := &bgCounter{Store: cfg.Store}
		cfg.Store = counter
		e.startWorker(cfg)
		text := strings.Repeat("An earlier attempt's chunks are cleared in slices. ", 30)
		docID, jobID := e.upload(tenantA, extract.TypeText, []byte(text))
		if job := e.wait(jobID); job.State != queue.StateCompleted {
			t.Fatalf("job %s: %s", job.State, job.ErrorMessage)
		}
		_, first := e.document(tenantA, docID)
		if counter.deletes.Load() != 0 {
			t.Fatalf("%d deletes on the first run, which had nothing to clear", counter.deletes.Load())
		}
		err := e.db.InTenant(e.ctx, tenantA, func(tx docket.Tx) error {
			res, err := e.enqueueTx(tx, docID)
			if err == nil {
				jobID = res.Job.ID
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if job := e.wait(jobID); job.State != queue.StateCompleted {
			t.Fatalf("second job %s: %s", job.State, job.ErrorMessage)
		}
		_, chunks := e.document(tenantA, docID)
		if len(chunks) != len(first) || len(chunks) <= 32 {
			t.Fatalf("%d chunks after the second run, %d after the first; want the same, more than 32", len(chunks), len(first))
		}
		for i, c := range chunks {
			if c.Index != i {
				t.Fatalf("chunk %d has index %d", i, c.Index)
			}
		}
		if d, w := counter.deletes.Load(), counter.widest.Load(); w != 16 || d < int64((len(chunks)+15)/16) {
			t.Errorf("%d chunks cleared in %d transactions, the widest of %d indexes; want windows of 16",
				len(chunks), d, w)
		}
	})
}
