package sqlitestore_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/sqlite"
)

// setupDocs opens a fresh database whose clock the test moves, with one
// tenant "t1".
func setupDocs(t *testing.T) (*testStore, *testClock) {
	t.Helper()
	clk := &testClock{}
	clk.us.Store(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixMicro())
	driver, err := sqlite.OpenConfig(t.Context(), sqlite.Config{
		Path: filepath.Join(t.TempDir(), "docket.db"), Synchronous: "NORMAL", Now: clk.Now,
	})
	if err != nil {
		t.Fatalf("OpenConfig: %v", err)
	}
	t.Cleanup(func() { _ = driver.Close() })
	d := storeOf(driver)
	if err := d.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if _, err := d.TenantCreate(t.Context(), &docket.TenantCreateParams{ID: "t1", Name: "one"}); err != nil {
		t.Fatalf("TenantCreate: %v", err)
	}
	return d, clk
}

// testClock is a store clock that moves only when told.
type testClock struct{ us atomic.Int64 }

func (c *testClock) Now() time.Time      { return time.UnixMicro(c.us.Load()).UTC() }
func (c *testClock) Add(d time.Duration) { c.us.Add(d.Microseconds()) }

// newDoc returns a document to insert.
func newDoc(id string) *docket.Document { return &docket.Document{ID: id, Filename: id + ".txt"} }

// inTenant runs fn in a write transaction of t1 and fails the test on error.
func inTenant(t *testing.T, d *testStore, fn func(tx docket.Tx) error) {
	t.Helper()
	if err := d.InTenant(t.Context(), "t1", fn); err != nil {
		t.Fatalf("InTenant: %v", err)
	}
}

func getDoc(t *testing.T, d *testStore, tenant, id string) (*docket.Document, error) {
	t.Helper()
	var doc *docket.Document
	err := d.ReadTenant(t.Context(), tenant, func(tx docket.Tx) error {
		var err error
		doc, err = tx.DocumentGet(t.Context(), id)
		return err
	})
	return doc, err
}

// TestDocs_EnqueueAndCompleteInTenant creates a document and its job in
// one InTenant transaction, and a worker completes the job with CompleteTx
// in another, together with the document's fields.
func TestDocs_EnqueueAndCompleteInTenant(t *testing.T) {
	d, _ := setupDocs(t)
	ctx := t.Context()
	client := queue.NewClient(d, queue.ClientConfig{})
	inTenant(t, d, func(tx docket.Tx) error {
		if err := tx.DocumentInsert(ctx, newDoc("d1")); err != nil {
			return err
		}
		res, err := client.EnqueueTx(ctx, tx.Native(), &queue.EnqueueParams{Kind: "process", TenantID: "t1", Args: map[string]string{"document_id": "d1"}})
		if err != nil {
			return err
		}
		_, err = tx.DocumentUpdate(ctx, &docket.DocumentUpdateParams{ID: "d1", JobID: &res.Job.ID})
		return err
	})
	if doc, err := getDoc(t, d, "t1", "d1"); err != nil || doc.Status != docket.StatusPending || doc.JobID == 0 {
		t.Fatalf("after enqueue: %+v, %v; want pending with a job", doc, err)
	}

	seen := make(chan docket.DocumentStatus, 1)
	done := make(chan error, 1)
	handler := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
		doc, err := getDoc(t, d, "t1", "d1")
		if err == nil {
			seen <- doc.Status
		}
		err = d.InTenant(ctx, "t1", func(tx docket.Tx) error {
			if _, err := tx.DocumentUpdate(ctx, &docket.DocumentUpdateParams{ID: "d1", Fields: &docket.Fields{Title: "T"}, Warnings: []string{}}); err != nil {
				return err
			}
			return task.CompleteTx(ctx, tx.Native())
		})
		done <- err
		return err
	})
	runWorker(t, client, handler)
	if st := <-seen; st != docket.StatusProcessing {
		t.Fatalf("status while the handler runs = %q, want processing", st)
	}
	if err := <-done; err != nil {
		t.Fatalf("complete in InTenant: %v", err)
	}
	doc, err := getDoc(t, d, "t1", "d1")
	if err != nil || doc.Status != docket.StatusCompleted || doc.Fields == nil || doc.Fields.Title != "T" || doc.Warnings == nil {
		t.Fatalf("after completion: %+v, %v; want completed with fields and warnings", doc, err)
	}
}

// runWorker runs a worker of kind "process" until the test ends.
func runWorker(t *testing.T, client *queue.Client, h queue.Handler) {
	t.Helper()
	w, err := queue.NewWorker(client, queue.WorkerConfig{
		Handlers:     map[string]queue.HandlerConfig{"process": {Handler: h}},
		PollInterval: 20 * time.Millisecond,
		Maintenance:  queue.MaintenanceConfig{Disabled: true},
	})
	if err != nil {
		t.Fatalf("NewWorker: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-stopped; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("worker Run: %v", err)
		}
	})
}

// TestDocs_RateLimitConcurrent: 20 concurrent takes with limit 5 take
// exactly 5 slots; the window reopens when the clock passes it.
func TestDocs_RateLimitConcurrent(t *testing.T) {
	d, clk := setupDocs(t)
	p := &docket.RateLimitParams{Limit: 5, Window: time.Hour}
	var allowed atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			err := d.InTenant(t.Context(), "t1", func(tx docket.Tx) error {
				rl, err := tx.RateLimitTake(t.Context(), p)
				if err == nil && rl.Allowed {
					allowed.Add(1)
				}
				return err
			})
			if err != nil {
				t.Errorf("RateLimitTake: %v", err)
			}
		})
	}
	wg.Wait()
	if n := allowed.Load(); n != 5 {
		t.Fatalf("%d takes allowed, want 5", n)
	}
	clk.Add(10 * time.Minute)
	rl := take(t, d, p)
	if rl.Allowed || rl.Remaining != 0 || rl.RetryAfter != 50*time.Minute {
		t.Fatalf("take past the limit = %+v, want refused, retry after 50m", rl)
	}
	clk.Add(50 * time.Minute)
	if rl := take(t, d, p); !rl.Allowed || rl.Remaining != 4 {
		t.Fatalf("take after the window = %+v, want allowed, 4 remaining (the first five left the window)", rl)
	}
}

func take(t *testing.T, d *testStore, p *docket.RateLimitParams) *docket.RateLimit {
	t.Helper()
	var rl *docket.RateLimit
	inTenant(t, d, func(tx docket.Tx) error {
		var err error
		rl, err = tx.RateLimitTake(t.Context(), p)
		return err
	})
	return rl
}

// TestDocs_RateLimitPeek: slots leave the window by the store's clock; a
// peek takes nothing.
func TestDocs_RateLimitPeek(t *testing.T) {
	d, clk := setupDocs(t)
	p := &docket.RateLimitParams{Limit: 2, Window: time.Minute}
	first := take(t, d, p)
	clk.Add(time.Second)
	second := take(t, d, p)
	if !first.Allowed || first.Remaining != 1 || first.RetryAfter != 0 || !second.Allowed || second.Remaining != 0 ||
		second.RetryAfter != 59*time.Second {
		t.Fatalf("takes = %+v, %+v", first, second)
	}
	clk.Add(59 * time.Second) // the first slot leaves the window
	err := d.ReadTenant(t.Context(), "t1", func(tx docket.Tx) error {
		rl, err := tx.RateLimitPeek(t.Context(), p)
		if err == nil && (rl.Allowed || rl.Remaining != 1 || rl.Limit != 2) {
			err = fmt.Errorf("peek = %+v, want 1 remaining", rl)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDocs_ReadTenantDoesNotWaitForWriter reads while an InTenant
// transaction holds the writer.
func TestDocs_ReadTenantDoesNotWaitForWriter(t *testing.T) {
	d, _ := setupDocs(t)
	inTenant(t, d, func(tx docket.Tx) error { return tx.DocumentInsert(t.Context(), newDoc("d1")) })
	holding, release := make(chan struct{}), make(chan struct{})
	writerDone := make(chan error, 1)
	go func() {
		writerDone <- d.InTenant(context.Background(), "t1", func(tx docket.Tx) error {
			_, err := tx.DocumentUpdate(context.Background(), &docket.DocumentUpdateParams{ID: "d1", Warnings: []string{"w"}})
			close(holding)
			<-release
			return err
		})
	}()
	<-holding
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	err := d.ReadTenant(ctx, "t1", func(tx docket.Tx) error {
		doc, err := tx.DocumentGet(ctx, "d1")
		if err == nil && doc.Warnings != nil {
			err = fmt.Errorf("read saw uncommitted warnings %v", doc.Warnings)
		}
		return err
	})
	close(release)
	if err != nil {
		t.Fatalf("ReadTenant while the writer is held: %v", err)
	}
	if err := <-writerDone; err != nil {
		t.Fatalf("InTenant: %v", err)
	}
}
