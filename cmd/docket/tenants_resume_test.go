package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/queue"
)

// A tenant deletion cut short (its blob store failed after the first
// batch) is finished when `docket worker` or `docket serve` starts, on
// both stores: the tenant's key, documents, blobs and jobs are gone and
// the deletion is no longer pending; another tenant keeps everything.
func TestStartup_ResumesTenantDeletion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		postgres bool
		args     []string
	}{
		{"worker/sqlite", false, []string{"worker"}},
		{"worker/postgres", true, []string{"worker"}},
		{"serve/sqlite", false, []string{"serve", "--listen", "127.0.0.1:0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			vars := map[string]string{"DOCKET_DATA_DIR": dir, "DOCKET_BLOB_URL": filepath.Join(dir, "blobs"), "DOCKET_LOG_LEVEL": "info"}
			if tc.postgres {
				vars["DATABASE_URL"] = newPGDatabase(t).url
			}
			sf := storeFlags{dataDir: dir, databaseURL: vars["DATABASE_URL"]}
			fx := newResumeFixture(t, &sf)
			gone, goneKeys := fx.tenant("gone"), []string{}
			kept := fx.tenant("kept")
			for i := range 3 {
				goneKeys = append(goneKeys, fx.doc(gone, i))
				fx.doc(kept, i)
			}
			fx.cutShort(gone)
			fx.close() // the embedded store serves one process

			ctx, cancel := context.WithCancel(context.Background())
			var stdout syncBuffer
			stderr := &lineWaiter{want: "tenant deletion finished"}
			stderr.found = make(chan struct{})
			done := make(chan error, 1)
			go func() { done <- run(ctx, tc.args, env(vars), &stdout, stderr) }()
			select {
			case <-stderr.found:
			case err := <-done:
				cancel()
				t.Fatalf("%v returned before resuming: %v\n%s", tc.args, err, stderr.String())
			case <-time.After(60 * time.Second):
				cancel()
				if err := <-done; err != nil {
					t.Logf("%v: %v", tc.args, err)
				}
				t.Fatalf("%v: no resumed deletion logged in 60 s\n%s", tc.args, stderr.String())
			}
			cancel()
			if err := <-done; err != nil {
				t.Errorf("%v: %v\n%s", tc.args, err, stderr.String())
			}
			if !strings.Contains(stderr.String(), "tenant deletion cut short: resuming it") {
				t.Errorf("the resume is not logged:\n%s", stderr.String())
			}
			fx = newResumeFixture(t, &sf)
			fx.wantGone(gone, goneKeys)
			fx.wantKept(kept)
		})
	}
}

// lineWaiter is a log writer that closes found once a write holds want.
type lineWaiter struct {
	syncBuffer
	want  string
	found chan struct{}
	once  sync.Once
}

func (w *lineWaiter) Write(p []byte) (int, error) {
	n, err := w.syncBuffer.Write(p)
	if strings.Contains(w.String(), w.want) {
		w.once.Do(func() { close(w.found) })
	}
	return n, err
}

// resumeFixture is a store and blob store opened as serve opens them, for
// setting up a deletion cut short and checking what is left after it.
type resumeFixture struct {
	t      *testing.T
	ctx    context.Context
	store  documentStore
	client *queue.Client
	blobs  blob.Store
	docN   int    // documents stored
	close  func() // closes the store
}

func newResumeFixture(t *testing.T, sf *storeFlags) *resumeFixture {
	t.Helper()
	ctx := context.Background()
	d, err := sf.open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	store, _ := documents(d)
	close := d.Close
	blobs, err := blob.NewLocal(filepath.Join(sf.dataDir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	return &resumeFixture{t: t, ctx: ctx, store: store, close: func() { _ = close() }, client: queue.NewClient(d, queue.ClientConfig{}), blobs: blobs}
}

// tenant creates a tenant with a key.
func (f *resumeFixture) tenant(name string) string {
	f.t.Helper()
	tn, err := f.store.TenantCreate(f.ctx, &docket.TenantCreateParams{ID: "t_" + name, Name: name, Plan: docket.PlanFree})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.store.APIKeyInsert(f.ctx, &docket.APIKey{ID: "k_" + name, TenantID: tn.ID, Hash: []byte("hash")}); err != nil {
		f.t.Fatal(err)
	}
	return tn.ID
}

// doc stores document n of tenant with its blob and a job (in a queue no
// worker serves, so it stays pending), and returns its blob key.
func (f *resumeFixture) doc(tenant string, n int) string {
	f.t.Helper()
	f.docN++
	doc := &docket.Document{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", f.docN),
		Filename: "a.txt", ContentType: "text/plain", Size: 5, BlobKey: fmt.Sprintf("%s/doc%d", tenant, n)}
	if _, err := f.blobs.Put(f.ctx, doc.BlobKey, strings.NewReader("hello")); err != nil {
		f.t.Fatal(err)
	}
	err := f.store.InTenant(f.ctx, tenant, func(tx docket.Tx) error {
		if err := tx.DocumentInsert(f.ctx, doc); err != nil {
			return err
		}
		_, err := f.client.EnqueueTx(f.ctx, tx.Native(), &queue.EnqueueParams{Queue: "resume-test", Kind: "resume-test", TenantID: tenant})
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return doc.BlobKey
}

var errBlobsDown = errors.New("blob store down")

// cutShort begins tenant's deletion with a blob store that fails on its
// second batch: the first document goes, the rest stays.
func (f *resumeFixture) cutShort(tenant string) {
	f.t.Helper()
	calls := 0
	_, err := f.store.TenantDelete(f.ctx, &docket.TenantDeleteParams{ID: tenant, BatchSize: 1,
		DeleteBlobs: func(ctx context.Context, keys []string) error {
			if calls++; calls > 1 {
				return errBlobsDown
			}
			return blob.DeleteMany(ctx, f.blobs, keys)
		}})
	if !errors.Is(err, errBlobsDown) {
		f.t.Fatalf("TenantDelete with a failing blob store: %v", err)
	}
	if ds, err := f.store.TenantDeletionList(f.ctx, nil); err != nil || len(ds) != 1 || ds[0].TenantID != tenant {
		f.t.Fatalf("TenantDeletionList after the cut: %v, %v", ds, err)
	}
	if docs := f.docs(tenant); docs != 2 {
		f.t.Fatalf("%d documents left after the cut, want 2", docs)
	}
}

func (f *resumeFixture) docs(tenant string) int {
	f.t.Helper()
	var n int
	err := f.store.ReadTenant(f.ctx, tenant, func(tx docket.Tx) error {
		docs, err := tx.DocumentList(f.ctx, &docket.DocumentListParams{})
		n = len(docs)
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

func (f *resumeFixture) jobs(tenant string) int {
	f.t.Helper()
	jobs, err := f.client.List(f.ctx, &queue.JobListParams{TenantID: tenant, Limit: 100})
	if err != nil {
		f.t.Fatal(err)
	}
	return len(jobs)
}

func (f *resumeFixture) wantGone(tenant string, blobKeys []string) {
	f.t.Helper()
	if ds, err := f.store.TenantDeletionList(f.ctx, nil); err != nil || len(ds) != 0 {
		f.t.Errorf("TenantDeletionList after the resume: %v, %v; want none", ds, err)
	}
	if _, err := f.store.TenantGet(f.ctx, tenant); !errors.Is(err, docket.ErrNotFound) {
		f.t.Errorf("TenantGet(deleted): %v", err)
	}
	if _, err := f.store.APIKeyGet(f.ctx, "k_"+strings.TrimPrefix(tenant, "t_")); !errors.Is(err, docket.ErrNotFound) {
		f.t.Errorf("the deleted tenant's key: %v", err)
	}
	if n := f.docs(tenant); n != 0 {
		f.t.Errorf("the deleted tenant has %d documents", n)
	}
	if n := f.jobs(tenant); n != 0 {
		f.t.Errorf("the deleted tenant has %d jobs", n)
	}
	for _, k := range blobKeys {
		if _, err := f.blobs.Stat(f.ctx, k); !errors.Is(err, blob.ErrNotFound) {
			f.t.Errorf("the deleted tenant's blob %s: %v, want it gone", k, err)
		}
	}
}

func (f *resumeFixture) wantKept(tenant string) {
	f.t.Helper()
	if _, err := f.store.TenantGet(f.ctx, tenant); err != nil {
		f.t.Errorf("TenantGet(other tenant): %v", err)
	}
	if _, err := f.store.APIKeyGet(f.ctx, "k_"+strings.TrimPrefix(tenant, "t_")); err != nil {
		f.t.Errorf("the other tenant's key: %v", err)
	}
	if n := f.docs(tenant); n != 3 {
		f.t.Errorf("the other tenant has %d documents, want 3", n)
	}
	if n := f.jobs(tenant); n != 3 {
		f.t.Errorf("the other tenant has %d jobs, want 3", n)
	}
	for i := range 3 {
		if _, err := f.blobs.Stat(f.ctx, fmt.Sprintf("%s/doc%d", tenant, i)); err != nil {
			f.t.Errorf("the other tenant's blob %d: %v", i, err)
		}
	}
}
