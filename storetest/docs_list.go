package storetest

import (
	"fmt"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

func documentListChecks() []docCheck {
	return []docCheck{
		{"NewestFirst", checkDocListOrder},
		{"Pagination", checkDocListPages},
		{"StatusFilter", checkDocListStatus},
		{"DefaultLimit", checkDocListDefaultLimit},
	}
}

// insertDocs inserts n documents of tenant, one transaction each, and
// returns their ids in insertion order.
func (f *docFixture) insertDocs(tenant string, n int) []string {
	f.t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = f.insertDoc(tenant, fmt.Sprintf("doc-%d.txt", i)).ID
	}
	return ids
}

func reversed(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[len(ids)-1-i] = id
	}
	return out
}

func checkDocListOrder(f *docFixture) {
	tn := f.tenant("a")
	if docs := f.listDocs(tn.ID, &docket.DocumentListParams{}); len(docs) != 0 {
		f.t.Fatalf("DocumentList of a new tenant: %d documents", len(docs))
	}
	ids := f.insertDocs(tn.ID, 4)
	docs := f.listDocs(tn.ID, &docket.DocumentListParams{})
	f.wantDocIDs("DocumentList", docs, reversed(ids)...)
	for i := 1; i < len(docs); i++ {
		if docs[i].CreatedAt.After(docs[i-1].CreatedAt) {
			f.t.Fatalf("DocumentList[%d] created %v after DocumentList[%d] (%v): want newest first",
				i, docs[i].CreatedAt, i-1, docs[i-1].CreatedAt)
		}
	}
	for _, d := range docs {
		if d.TenantID != tn.ID || d.Status != docket.StatusPending || d.BlobKey != "blob/"+d.ID {
			f.t.Fatalf("listed document %+v: want every column as stored", d)
		}
	}
}

func checkDocListPages(f *docFixture) {
	tn := f.tenant("a")
	want := reversed(f.insertDocs(tn.ID, 5))
	var got []string
	before := ""
	for range 3 {
		page := f.listDocs(tn.ID, &docket.DocumentListParams{Before: before, Limit: 2})
		if len(page) > 2 {
			f.t.Fatalf("DocumentList(Limit 2): %d documents", len(page))
		}
		for _, d := range page {
			got = append(got, d.ID)
		}
		if len(page) > 0 {
			before = page[len(page)-1].ID
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		f.t.Fatalf("pages of 2 by Before: %v, want %v", got, want)
	}
	if last := f.listDocs(tn.ID, &docket.DocumentListParams{Before: want[4], Limit: 2}); len(last) != 0 {
		f.t.Fatalf("DocumentList(Before the oldest): %d documents, want none", len(last))
	}
	f.wantDocIDs("DocumentList(Before the newest)", f.listDocs(tn.ID, &docket.DocumentListParams{Before: want[0]}), want[1:]...)
}

// statusDocs makes documents of tenant in every status and returns their
// ids by status. The completed one includes a document whose recorded
// status (pending) disagrees with its job's: the job decides.
func (f *docFixture) statusDocs(tenant string) map[docket.DocumentStatus][]string {
	f.t.Helper()
	by := make(map[docket.DocumentStatus][]string)
	add := func(s docket.DocumentStatus, id string) { by[s] = append(by[s], id) }
	// The tenant runs one job at a time: finish each claimed job before
	// the next claim, and leave the running one for last.
	for _, outcome := range []queue.Outcome{queue.OutcomeCompleted, queue.OutcomeFailed} {
		doc, _ := f.docWithJob(tenant, time.Time{})
		f.mustFinish(f.claimDoc(), outcome)
		add(docket.DocumentStatus(outcome), doc.ID)
	}
	stale, _ := f.docWithJob(tenant, time.Time{})
	f.mustFinish(f.claimDoc(), queue.OutcomeCompleted)
	pending := docket.StatusPending
	f.updateDoc(tenant, &docket.DocumentUpdateParams{ID: stale.ID, Status: &pending})
	add(docket.StatusCompleted, stale.ID)
	cancelled, job := f.docWithJob(tenant, time.Time{})
	if _, err := f.x.JobCancel(f.ctx, &driver.JobCancelParams{ID: job.ID}); err != nil {
		f.t.Fatalf("JobCancel: %v", err)
	}
	add(docket.StatusCancelled, cancelled.ID)
	running, _ := f.docWithJob(tenant, time.Time{})
	f.claimDoc()
	add(docket.StatusProcessing, running.ID)
	waiting, _ := f.docWithJob(tenant, time.Time{})
	add(docket.StatusPending, waiting.ID)
	noJob := f.insertDoc(tenant, "no-job.txt")
	add(docket.StatusPending, noJob.ID)
	return by
}

func checkDocListStatus(f *docFixture) {
	tn := f.tenant("a")
	by := f.statusDocs(tn.ID)
	for _, s := range []docket.DocumentStatus{
		docket.StatusPending, docket.StatusProcessing, docket.StatusCompleted, docket.StatusFailed, docket.StatusCancelled,
	} {
		docs := f.listDocs(tn.ID, &docket.DocumentListParams{Status: s})
		f.wantDocIDs(fmt.Sprintf("DocumentList(status %s)", s), docs, reversed(by[s])...)
		for _, d := range docs {
			if d.Status != s {
				f.t.Fatalf("DocumentList(status %s) returned document %s with Status %s", s, d.ID, d.Status)
			}
		}
	}
	completed := reversed(by[docket.StatusCompleted])
	page := f.listDocs(tn.ID, &docket.DocumentListParams{Status: docket.StatusCompleted, Before: completed[0], Limit: 1})
	f.wantDocIDs("DocumentList(completed, Before the newest completed)", page, completed[1])
	if n := len(f.listDocs(tn.ID, &docket.DocumentListParams{})); n != 7 {
		f.t.Fatalf("DocumentList(all): %d documents, want 7", n)
	}
}

// checkDocListDefaultLimit lists 51 documents without a limit: 50 come back.
func checkDocListDefaultLimit(f *docFixture) {
	tn := f.tenant("a")
	f.write(tn.ID, func(tx docket.Tx) error {
		for i := range 51 {
			if err := tx.DocumentInsert(f.ctx, f.newDoc(fmt.Sprintf("doc-%d.txt", i))); err != nil {
				return err
			}
		}
		return nil
	})
	if n := len(f.listDocs(tn.ID, &docket.DocumentListParams{})); n != 50 {
		f.t.Fatalf("DocumentList(Limit 0) of 51 documents: %d, want the default 50", n)
	}
	if n := len(f.listDocs(tn.ID, &docket.DocumentListParams{Limit: 1000})); n != 51 {
		f.t.Fatalf("DocumentList(Limit 1000) of 51 documents: %d, want 51", n)
	}
}
