package storetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// The checks of Store.TenantDelete (docket/tenant_delete.go): everything of
// the tenant goes, in batches, blobs through the caller; nothing of another
// tenant does; a deletion cut short hides the tenant, refuses its uploads
// and starts none of its jobs, and is finished by running it again; a
// running job's lease ends.
func tenantDeleteChecks() []docCheck {
	return []docCheck{
		{"Everything", checkTenantDeleteEverything},
		{"RunningJobFenced", checkTenantDeleteRunning},
		{"ResumeAfterFailure", checkTenantDeleteResume},
		{"Unknown", func(f *docFixture) {
			_, err := f.s.TenantDelete(f.ctx, &docket.TenantDeleteParams{ID: "t_nobody"})
			dWantErr(f.t, "TenantDelete(unknown)", err, docket.ErrNotFound)
			_, err = f.s.TenantDelete(f.ctx, &docket.TenantDeleteParams{})
			dWantErr(f.t, "TenantDelete(no id)", err, docket.ErrInvalid)
		}},
		{"CreateAgain", checkTenantDeleteCreateAgain},
	}
}

// tenantWithEverything gives tenant name a key, three documents with
// chunks and blobs, a pending job, an idempotency record and a rate-limit
// slot, and returns the tenant and its documents' blob keys.
func (f *docFixture) tenantWithEverything(name string) (*docket.Tenant, []string) {
	f.t.Helper()
	tn := f.tenant(name)
	if err := f.s.APIKeyInsert(f.ctx, &docket.APIKey{ID: "k_" + name, TenantID: tn.ID, Hash: []byte("hash")}); err != nil {
		f.t.Fatalf("APIKeyInsert: %v", err)
	}
	var keys []string
	for range 3 {
		doc := f.insertDoc(tn.ID, "doc.txt")
		keys = append(keys, doc.BlobKey)
		f.write(tn.ID, func(tx docket.Tx) error {
			return tx.ChunkReplace(f.ctx, doc.ID, []*docket.Chunk{{Index: 0, Text: "chunk of " + name, PageStart: 1, PageEnd: 1}})
		})
	}
	doc, _ := f.docWithJob(tn.ID, time.Time{})
	keys = append(keys, doc.BlobKey)
	f.write(tn.ID, func(tx docket.Tx) error {
		if err := tx.IdempotencyInsert(f.ctx, &docket.IdempotencyRecord{Key: "idem-" + name, RequestHash: "h", StatusCode: 202, Body: []byte("{}")}); err != nil {
			return err
		}
		_, err := tx.RateLimitTake(f.ctx, &docket.RateLimitParams{Limit: 10, Window: time.Hour})
		return err
	})
	return tn, keys
}

// blobRecorder records the keys DeleteBlobs is given; fail makes its
// call number fail (1-based; 0: never).
type blobRecorder struct {
	mu   sync.Mutex
	keys []string
	fail int
	n    int
}

var errBlobStore = errors.New("storetest: blob store down")

func (b *blobRecorder) delete(_ context.Context, keys []string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n++; b.n == b.fail {
		return errBlobStore
	}
	b.keys = append(b.keys, keys...)
	return nil
}

func (b *blobRecorder) sorted() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := slices.Clone(b.keys)
	slices.Sort(k)
	return slices.Compact(k)
}

func checkTenantDeleteEverything(f *docFixture) {
	a, aKeys := f.tenantWithEverything("a")
	b, _ := f.tenantWithEverything("b")
	blobs := &blobRecorder{}
	begun := 0
	res, err := f.s.TenantDelete(f.ctx, &docket.TenantDeleteParams{ID: a.ID, BatchSize: 2, DeleteBlobs: blobs.delete,
		Begun: func() {
			// The tombstone has committed; the purge has not begun.
			begun++
			_, err := f.s.APIKeyGet(f.ctx, "k_a")
			dWantErr(f.t, "APIKeyGet when Begun is called", err, docket.ErrNotFound)
			if blobs.sorted() != nil {
				f.t.Error("Begun called after the purge began")
			}
		}})
	if err != nil {
		f.t.Fatalf("TenantDelete: %v", err)
	}
	if begun != 1 {
		f.t.Fatalf("Begun called %d times, want once", begun)
	}
	if res.Resumed || res.Documents != 4 || res.Jobs != 1 || res.Records != 2 {
		f.t.Fatalf("TenantDelete result %+v, want 4 documents, 1 job, 2 records, not resumed", res)
	}
	slices.Sort(aKeys)
	if got := blobs.sorted(); !slices.Equal(got, aKeys) {
		f.t.Fatalf("blobs deleted %v, want the tenant's %v", got, aKeys)
	}
	f.wantTenantGone(a.ID)
	// Another tenant keeps everything.
	if _, err := f.s.TenantGet(f.ctx, b.ID); err != nil {
		f.t.Fatalf("TenantGet(other tenant): %v", err)
	}
	if _, err := f.s.APIKeyGet(f.ctx, "k_b"); err != nil {
		f.t.Fatalf("APIKeyGet(other tenant's key): %v", err)
	}
	if docs := f.listDocs(b.ID, &docket.DocumentListParams{}); len(docs) != 4 {
		f.t.Fatalf("other tenant has %d documents, want 4", len(docs))
	}
	f.read(b.ID, func(tx docket.Tx) error {
		if _, err := tx.IdempotencyGet(f.ctx, "idem-b"); err != nil {
			f.t.Fatalf("other tenant's idempotency record: %v", err)
		}
		return nil
	})
	if jobs := f.tenantJobs(b.ID); len(jobs) != 1 {
		f.t.Fatalf("other tenant has %d jobs, want 1", len(jobs))
	}
	if jobs, _, err := f.x.JobClaim(f.ctx, &driver.JobClaimParams{Queue: docQueue, WorkerID: workerID, Max: 5, LeaseDuration: longLease}); err != nil || len(jobs) != 1 || jobs[0].TenantID != b.ID {
		f.t.Fatalf("JobClaim after the deletion: %v, %v; want the other tenant's one job", jobs, err)
	}
}

// wantTenantGone checks that nothing of tenant id is left to see.
func (f *docFixture) wantTenantGone(id string) {
	f.t.Helper()
	_, err := f.s.TenantGet(f.ctx, id)
	dWantErr(f.t, "TenantGet(deleted)", err, docket.ErrNotFound)
	_, err = f.s.APIKeyGet(f.ctx, "k_"+id[len("t_"):])
	dWantErr(f.t, "APIKeyGet(deleted tenant's key)", err, docket.ErrNotFound)
	if keys, err := f.s.APIKeyList(f.ctx, id); err != nil || len(keys) != 0 {
		f.t.Fatalf("APIKeyList(deleted): %d keys, %v", len(keys), err)
	}
	ts, err := f.s.TenantList(f.ctx, nil)
	if err != nil {
		f.t.Fatalf("TenantList: %v", err)
	}
	for _, tn := range ts {
		if tn.ID == id {
			f.t.Fatalf("TenantList lists the deleted tenant %s", id)
		}
	}
	if docs := f.listDocs(id, &docket.DocumentListParams{}); len(docs) != 0 {
		f.t.Fatalf("deleted tenant has %d documents", len(docs))
	}
	if jobs := f.tenantJobs(id); len(jobs) != 0 {
		f.t.Fatalf("deleted tenant has %d jobs", len(jobs))
	}
	f.read(id, func(tx docket.Tx) error {
		_, err := tx.IdempotencyGet(f.ctx, "idem-"+id[len("t_"):])
		dWantErr(f.t, "IdempotencyGet(deleted tenant's record)", err, docket.ErrNotFound)
		rl, err := tx.RateLimitPeek(f.ctx, &docket.RateLimitParams{Limit: 10, Window: time.Hour})
		if err != nil || rl.Remaining != 10 {
			f.t.Fatalf("RateLimitPeek(deleted tenant): %+v, %v; want an empty window", rl, err)
		}
		return nil
	})
	err = f.s.InTenant(f.ctx, id, func(tx docket.Tx) error {
		_, err := tx.RateLimitTake(f.ctx, &docket.RateLimitParams{Limit: 10, Window: time.Hour})
		return err
	})
	dWantErr(f.t, "RateLimitTake(deleted tenant)", err, docket.ErrNotFound)
}

// tenantJobs lists a tenant's jobs in every state.
func (f *docFixture) tenantJobs(tenant string) []*queue.Job {
	f.t.Helper()
	jobs, err := f.x.JobList(f.ctx, &queue.JobListParams{TenantID: tenant, Limit: 1000})
	if err != nil {
		f.t.Fatalf("JobList(%s): %v", tenant, err)
	}
	return jobs
}

func checkTenantDeleteRunning(f *docFixture) {
	a := f.tenant("a")
	f.docWithJob(a.ID, time.Time{})
	running := f.claimDoc()
	if _, err := f.s.TenantDelete(f.ctx, &docket.TenantDeleteParams{ID: a.ID}); err != nil {
		f.t.Fatalf("TenantDelete: %v", err)
	}
	held, err := f.x.JobHeartbeat(f.ctx, &driver.JobHeartbeatParams{Leases: []queue.Lease{running.Lease()}, LeaseDuration: time.Hour})
	if err != nil || len(held) != 0 {
		f.t.Fatalf("JobHeartbeat of the deleted tenant's running job: %v held, %v; want its lease gone", held, err)
	}
	if err := f.finishJob(f.x, running, queue.OutcomeCompleted); !errors.Is(err, queue.ErrLeaseLost) {
		f.t.Fatalf("JobFinish of the deleted tenant's running job: %v, want ErrLeaseLost", err)
	}
	f.wantTenantGone(a.ID)
}

func checkTenantDeleteResume(f *docFixture) {
	a, aKeys := f.tenantWithEverything("a")
	f.tenantWithEverything("b")
	blobs := &blobRecorder{fail: 2}
	_, err := f.s.TenantDelete(f.ctx, &docket.TenantDeleteParams{ID: a.ID, BatchSize: 1, DeleteBlobs: blobs.delete})
	if !errors.Is(err, errBlobStore) {
		f.t.Fatalf("TenantDelete with a failing blob store: %v, want its error", err)
	}
	// Cut short: the tenant is hidden, its key gone, its uploads refused
	// and its jobs paused, but not everything is deleted yet.
	_, err = f.s.TenantGet(f.ctx, a.ID)
	dWantErr(f.t, "TenantGet(deletion cut short)", err, docket.ErrNotFound)
	_, err = f.s.TenantUpdate(f.ctx, &docket.TenantUpdateParams{ID: a.ID, Name: new("renamed")})
	dWantErr(f.t, "TenantUpdate(deletion cut short)", err, docket.ErrNotFound)
	_, err = f.s.APIKeyGet(f.ctx, "k_a")
	dWantErr(f.t, "APIKeyGet(deletion cut short)", err, docket.ErrNotFound)
	err = f.s.InTenant(f.ctx, a.ID, func(tx docket.Tx) error {
		_, err := tx.RateLimitTake(f.ctx, &docket.RateLimitParams{Limit: 10, Window: time.Hour})
		return err
	})
	dWantErr(f.t, "RateLimitTake(deletion cut short)", err, docket.ErrNotFound)
	if docs := f.listDocs(a.ID, &docket.DocumentListParams{}); len(docs) == 0 {
		f.t.Fatal("the failed deletion deleted every document; the check needs it cut short")
	}
	jobs, _, err := f.x.JobClaim(f.ctx, &driver.JobClaimParams{Queue: docQueue, WorkerID: workerID, Max: 5, LeaseDuration: longLease})
	if err != nil || len(jobs) != 1 || jobs[0].TenantID != "t_b" {
		f.t.Fatalf("JobClaim during the deletion: %v, %v; want only the other tenant's job", jobs, err)
	}
	blobs.fail = 0
	res, err := f.s.TenantDelete(f.ctx, &docket.TenantDeleteParams{ID: a.ID, BatchSize: 1, DeleteBlobs: blobs.delete})
	if err != nil {
		f.t.Fatalf("TenantDelete again: %v", err)
	}
	if !res.Resumed || res.Jobs != 1 {
		f.t.Fatalf("TenantDelete again: %+v, want resumed with the job deleted", res)
	}
	slices.Sort(aKeys)
	if got := blobs.sorted(); !slices.Equal(got, aKeys) {
		f.t.Fatalf("blobs deleted %v, want the tenant's %v", got, aKeys)
	}
	f.wantTenantGone(a.ID)
	_, err = f.s.TenantDelete(f.ctx, &docket.TenantDeleteParams{ID: a.ID})
	dWantErr(f.t, "TenantDelete(finished)", err, docket.ErrNotFound)
}

func checkTenantDeleteCreateAgain(f *docFixture) {
	a, _ := f.tenantWithEverything("a")
	if _, err := f.s.TenantDelete(f.ctx, &docket.TenantDeleteParams{ID: a.ID}); err != nil {
		f.t.Fatalf("TenantDelete: %v", err)
	}
	again := f.tenant("a")
	if _, err := f.s.TenantGet(f.ctx, again.ID); err != nil {
		f.t.Fatalf("TenantGet(created again): %v", err)
	}
	f.write(again.ID, func(tx docket.Tx) error {
		rl, err := tx.RateLimitTake(f.ctx, &docket.RateLimitParams{Limit: 10, Window: time.Hour})
		if err == nil && (!rl.Allowed || rl.Remaining != 9) {
			f.t.Fatalf("RateLimitTake(created again): %+v, want the first slot of an empty window", rl)
		}
		return err
	})
}
