package storetest

import (
	"errors"
	"slices"
	"sync"

	"github.com/docketq/docket"
)

// The checks of Store.TenantDeletionList, and of resuming what it lists
// (what `docket serve` and `docket worker` do at startup): a deletion cut
// short is listed until it is finished, a finished one never; resuming
// every listed deletion leaves nothing of those tenants and everything of
// the others; two resumes of one deletion at once both end well.
func tenantResumeChecks() []docCheck {
	return []docCheck{
		{"DeletionList", checkTenantDeletionList},
		{"ResumeTwiceAtOnce", checkTenantResumeTwiceAtOnce},
	}
}

// cutShort begins tenant id's deletion and makes its blob store fail on its
// second batch, so that the deletion stops with part of it done.
func (f *docFixture) cutShort(id string, blobs *blobRecorder) {
	f.t.Helper()
	blobs.fail = blobs.n + 2
	_, err := f.s.TenantDelete(f.ctx, &docket.TenantDeleteParams{ID: id, BatchSize: 1, DeleteBlobs: blobs.delete})
	if !errors.Is(err, errBlobStore) {
		f.t.Fatalf("TenantDelete(%s) with a failing blob store: %v, want its error", id, err)
	}
	if docs := f.listDocs(id, &docket.DocumentListParams{}); len(docs) == 0 {
		f.t.Fatalf("the failed deletion of %s deleted every document; the check needs it cut short", id)
	}
	blobs.fail = 0
}

// deletions lists the pending deletions' tenant ids.
func (f *docFixture) deletions(p *docket.TenantDeletionListParams) []string {
	f.t.Helper()
	ds, err := f.s.TenantDeletionList(f.ctx, p)
	if err != nil {
		f.t.Fatalf("TenantDeletionList(%+v): %v", p, err)
	}
	var ids []string
	for _, d := range ds {
		if d.StartedAt.IsZero() {
			f.t.Errorf("TenantDeletionList: %s has no start time", d.TenantID)
		}
		ids = append(ids, d.TenantID)
	}
	return ids
}

func checkTenantDeletionList(f *docFixture) {
	if got := f.deletions(nil); len(got) != 0 {
		f.t.Fatalf("TenantDeletionList of a new store: %v, want none", got)
	}
	a, aKeys := f.tenantWithEverything("a")
	b, bKeys := f.tenantWithEverything("b")
	c, _ := f.tenantWithEverything("c")
	kept, _ := f.tenantWithEverything("kept")
	if _, err := f.s.TenantDelete(f.ctx, &docket.TenantDeleteParams{ID: c.ID}); err != nil {
		f.t.Fatalf("TenantDelete(c): %v", err)
	}
	blobs := &blobRecorder{}
	f.cutShort(a.ID, blobs)
	f.cutShort(b.ID, blobs)
	if got := f.deletions(&docket.TenantDeletionListParams{}); !slices.Equal(got, []string{a.ID, b.ID}) {
		f.t.Fatalf("TenantDeletionList: %v, want the two cut short, oldest first (not the finished one)", got)
	}
	if got := f.deletions(&docket.TenantDeletionListParams{Limit: 1}); !slices.Equal(got, []string{a.ID}) {
		f.t.Fatalf("TenantDeletionList(limit 1): %v, want the oldest", got)
	}
	_, err := f.s.TenantDeletionList(f.ctx, &docket.TenantDeletionListParams{Limit: -1})
	dWantErr(f.t, "TenantDeletionList(limit -1)", err, docket.ErrInvalid)

	for _, id := range f.deletions(nil) {
		res, err := f.s.TenantDelete(f.ctx, &docket.TenantDeleteParams{ID: id, DeleteBlobs: blobs.delete})
		if err != nil || !res.Resumed {
			f.t.Fatalf("TenantDelete(%s) of a listed deletion: %+v, %v; want it resumed", id, res, err)
		}
	}
	if got := f.deletions(nil); len(got) != 0 {
		f.t.Fatalf("TenantDeletionList after resuming: %v, want none", got)
	}
	f.wantTenantGone(a.ID)
	f.wantTenantGone(b.ID)
	want := slices.Concat(aKeys, bKeys)
	slices.Sort(want)
	if got := blobs.sorted(); !slices.Equal(got, want) {
		f.t.Fatalf("blobs deleted %v, want the two tenants' %v", got, want)
	}
	if docs := f.listDocs(kept.ID, &docket.DocumentListParams{}); len(docs) != 4 {
		f.t.Fatalf("the other tenant has %d documents, want 4", len(docs))
	}
	if _, err := f.s.APIKeyGet(f.ctx, "k_kept"); err != nil {
		f.t.Fatalf("APIKeyGet(the other tenant's key): %v", err)
	}
}

func checkTenantResumeTwiceAtOnce(f *docFixture) {
	a, aKeys := f.tenantWithEverything("a")
	f.tenantWithEverything("b")
	blobs := &blobRecorder{}
	f.cutShort(a.ID, blobs)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = f.s.TenantDelete(f.ctx, &docket.TenantDeleteParams{ID: a.ID, DeleteBlobs: blobs.delete})
		})
	}
	wg.Wait()
	for _, err := range errs {
		// The slower one finds the deletion ended (ErrNotFound), or gives
		// the end to the other after its rounds (ErrConflict).
		if err != nil && !errors.Is(err, docket.ErrNotFound) && !errors.Is(err, docket.ErrConflict) {
			f.t.Fatalf("two resumes at once: %v", errs)
		}
	}
	if got := f.deletions(nil); len(got) != 0 {
		f.t.Fatalf("TenantDeletionList after two resumes (%v): %v, want none", errs, got)
	}
	f.wantTenantGone(a.ID)
	slices.Sort(aKeys)
	if got := blobs.sorted(); !slices.Equal(got, aKeys) {
		f.t.Fatalf("blobs deleted %v, want the tenant's %v", got, aKeys)
	}
}
