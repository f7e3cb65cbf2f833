package storetest

import (
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

func documentStatusChecks() []docCheck {
	return []docCheck{
		{"PendingProcessingCompleted", checkStatusLifecycle},
		{"Failed", checkStatusFailed},
		{"ErrorOnlyWhenFailed", checkStatusErrorOnlyWhenFailed},
		{"Cancelled", checkStatusCancelled},
		{"WaitingIsProcessing", checkStatusWaiting},
		{"ScheduledIsPending", checkStatusScheduled},
		{"InsertWithJobID", checkStatusInsertWithJob},
		{"JobOverridesRecorded", checkStatusJobOverrides},
		{"RecordedWhenJobGone", checkStatusJobGone},
	}
}

// enqueueDoc enqueues the document job of tenant in tx, due at runAt
// (zero: now).
func (f *docFixture) enqueueDoc(tx docket.Tx, runAt time.Time) (*queue.Job, error) {
	res, err := queue.NewClient(f.d, queue.ClientConfig{}).EnqueueTx(f.ctx, tx.Native(), &queue.EnqueueParams{
		Queue: docQueue, Kind: docKind, TenantID: tx.TenantID(), RunAt: runAt,
	})
	if err != nil {
		return nil, err
	}
	return res.Job, nil
}

// docWithJob inserts a document of tenant and enqueues its job in one
// transaction, setting JobID with DocumentUpdate.
func (f *docFixture) docWithJob(tenant string, runAt time.Time) (*docket.Document, *queue.Job) {
	f.t.Helper()
	doc := f.newDoc("with-job.txt")
	var job *queue.Job
	f.write(tenant, func(tx docket.Tx) (err error) {
		if err = tx.DocumentInsert(f.ctx, doc); err != nil {
			return err
		}
		if job, err = f.enqueueDoc(tx, runAt); err != nil {
			return err
		}
		_, err = tx.DocumentUpdate(f.ctx, &docket.DocumentUpdateParams{ID: doc.ID, JobID: &job.ID})
		return err
	})
	return f.getDoc(tenant, doc.ID), job
}

// claimDoc claims the one claimable document job.
func (f *docFixture) claimDoc() *queue.Job {
	f.t.Helper()
	jobs, _, err := f.x.JobClaim(f.ctx, &driver.JobClaimParams{Queue: docQueue, WorkerID: workerID, Max: 1, LeaseDuration: longLease})
	if err != nil || len(jobs) != 1 {
		f.t.Fatalf("JobClaim(%s): %d jobs, %v; want 1", docQueue, len(jobs), err)
	}
	return jobs[0]
}

// finishJob ends a claimed job's attempt with outcome.
func (f *docFixture) finishJob(x driver.Executor, j *queue.Job, outcome queue.Outcome) error {
	errs, err := x.JobFinish(f.ctx, []*driver.JobFinishParams{{Lease: j.Lease(), Outcome: outcome, Error: "it broke", WorkerID: workerID}})
	if err != nil {
		return err
	}
	if len(errs) != 1 {
		return queue.ErrInvalid
	}
	return errs[0]
}

func (f *docFixture) mustFinish(j *queue.Job, outcome queue.Outcome) {
	f.t.Helper()
	if err := f.finishJob(f.x, j, outcome); err != nil {
		f.t.Fatalf("JobFinish(%d, %s): %v", j.ID, outcome, err)
	}
}

// wantStatus fails the check unless the document's Status is want and its
// Error is set when it failed ("it broke", finishJob's) and empty otherwise.
func (f *docFixture) wantStatus(tenant, id string, want docket.DocumentStatus) {
	f.t.Helper()
	got := f.getDoc(tenant, id)
	if got.Status != want {
		f.t.Fatalf("document %s: Status %s, want %s (job %d)", id, got.Status, want, got.JobID)
	}
	wantErr := ""
	if want == docket.StatusFailed {
		wantErr = "it broke"
	}
	if got.Error != wantErr {
		f.t.Fatalf("document %s (%s): Error %q, want %q", id, got.Status, got.Error, wantErr)
	}
}

func checkStatusLifecycle(f *docFixture) {
	tn := f.tenant("a")
	doc, job := f.docWithJob(tn.ID, time.Time{})
	if doc.JobID != job.ID || doc.Status != docket.StatusPending {
		f.t.Fatalf("document with job: JobID %d, Status %s; want %d, pending", doc.JobID, doc.Status, job.ID)
	}
	claimed := f.claimDoc()
	if claimed.ID != job.ID {
		f.t.Fatalf("claimed job %d, want the document's %d", claimed.ID, job.ID)
	}
	f.wantStatus(tn.ID, doc.ID, docket.StatusProcessing)
	f.mustFinish(claimed, queue.OutcomeCompleted)
	f.wantStatus(tn.ID, doc.ID, docket.StatusCompleted)
}

func checkStatusFailed(f *docFixture) {
	tn := f.tenant("a")
	doc, _ := f.docWithJob(tn.ID, time.Time{})
	f.mustFinish(f.claimDoc(), queue.OutcomeFailed)
	f.wantStatus(tn.ID, doc.ID, docket.StatusFailed)
}

// checkStatusErrorOnlyWhenFailed: a job scheduled again after a failed
// attempt keeps that attempt's message, but the document shows no error
// while it waits or runs again; only once the job fails.
func checkStatusErrorOnlyWhenFailed(f *docFixture) {
	tn := f.tenant("a")
	doc, _ := f.docWithJob(tn.ID, time.Time{})
	f.mustFinish(f.claimDoc(), queue.OutcomeRetry)
	f.wantStatus(tn.ID, doc.ID, docket.StatusPending)
	again := f.claimDoc()
	if again.ErrorMessage != "it broke" {
		f.t.Fatalf("job claimed again: ErrorMessage %q, want the first attempt's", again.ErrorMessage)
	}
	f.wantStatus(tn.ID, doc.ID, docket.StatusProcessing)
	f.mustFinish(again, queue.OutcomeFailed)
	f.wantStatus(tn.ID, doc.ID, docket.StatusFailed)
	var listed []*docket.Document
	f.read(tn.ID, func(tx docket.Tx) (err error) {
		listed, err = tx.DocumentList(f.ctx, &docket.DocumentListParams{Status: docket.StatusFailed})
		return err
	})
	if len(listed) != 1 || listed[0].Error != "it broke" {
		f.t.Fatalf("DocumentList(failed): %d documents, want 1 with Error %q", len(listed), "it broke")
	}
}

func checkStatusCancelled(f *docFixture) {
	tn := f.tenant("a")
	doc, job := f.docWithJob(tn.ID, time.Time{})
	if _, err := f.x.JobCancel(f.ctx, &driver.JobCancelParams{ID: job.ID}); err != nil {
		f.t.Fatalf("JobCancel: %v", err)
	}
	f.wantStatus(tn.ID, doc.ID, docket.StatusCancelled)
}

// checkStatusWaiting: a document whose job waits for the steps it
// spawned (a long PDF's page ranges) is processing.
func checkStatusWaiting(f *docFixture) {
	tn := f.tenant("a")
	doc, _ := f.docWithJob(tn.ID, time.Time{})
	job := f.claimDoc()
	step := &driver.JobInsertParams{Queue: docQueue, Kind: docket.DocumentPagesKind, TenantID: tn.ID,
		Args: []byte(`{}`), MaxAttempts: 1, UniqueKey: driver.StepKey(job.ID, "pages-0001-0032")}
	if _, err := f.x.JobSpawn(f.ctx, &driver.JobSpawnParams{Lease: job.Lease(), Children: []*driver.JobInsertParams{step}}); err != nil {
		f.t.Fatalf("JobSpawn: %v", err)
	}
	f.mustFinish(job, queue.OutcomeWaiting)
	if j, err := f.x.JobGet(f.ctx, job.ID); err != nil || j.State != queue.StateWaiting {
		f.t.Fatalf("job %v after OutcomeWaiting: %v", j, err)
	}
	f.wantStatus(tn.ID, doc.ID, docket.StatusProcessing)
}

func checkStatusScheduled(f *docFixture) {
	tn := f.tenant("a")
	doc, job := f.docWithJob(tn.ID, time.Now().Add(time.Hour))
	if job.State != queue.StateScheduled {
		f.t.Fatalf("job due in an hour is %s, want scheduled", job.State)
	}
	f.wantStatus(tn.ID, doc.ID, docket.StatusPending)
}

func checkStatusInsertWithJob(f *docFixture) {
	tn := f.tenant("a")
	doc := f.newDoc("a.txt")
	f.write(tn.ID, func(tx docket.Tx) error {
		job, err := f.enqueueDoc(tx, time.Time{})
		if err != nil {
			return err
		}
		doc.JobID = job.ID
		return tx.DocumentInsert(f.ctx, doc)
	})
	got := f.getDoc(tn.ID, doc.ID)
	if got.JobID != doc.JobID || got.Status != docket.StatusPending {
		f.t.Fatalf("document inserted with job %d: JobID %d, Status %s", doc.JobID, got.JobID, got.Status)
	}
	f.claimDoc()
	f.wantStatus(tn.ID, doc.ID, docket.StatusProcessing)
}

func checkStatusJobOverrides(f *docFixture) {
	tn := f.tenant("a")
	doc, _ := f.docWithJob(tn.ID, time.Time{})
	recorded := docket.StatusCompleted
	got := f.updateDoc(tn.ID, &docket.DocumentUpdateParams{ID: doc.ID, Status: &recorded})
	if got.Status != docket.StatusPending {
		f.t.Fatalf("DocumentUpdate returned Status %s; the existing pending job decides: pending", got.Status)
	}
	f.wantStatus(tn.ID, doc.ID, docket.StatusPending)
}

func checkStatusJobGone(f *docFixture) {
	tn := f.tenant("a")
	doc, job := f.docWithJob(tn.ID, time.Time{})
	f.mustFinish(f.claimDoc(), queue.OutcomeCompleted)
	// Record a status unlike the job's, to tell which one is shown.
	recorded := docket.StatusCancelled
	f.updateDoc(tn.ID, &docket.DocumentUpdateParams{ID: doc.ID, Status: &recorded})
	f.wantStatus(tn.ID, doc.ID, docket.StatusCompleted)
	n, err := f.x.JobDeleteFinished(f.ctx, &driver.JobDeleteFinishedParams{Limit: 100})
	if err != nil || n != 1 {
		f.t.Fatalf("JobDeleteFinished: %d, %v; want 1 deleted", n, err)
	}
	if _, err := f.x.JobGet(f.ctx, job.ID); err == nil {
		f.t.Fatalf("job %d still exists after JobDeleteFinished", job.ID)
	}
	got := f.getDoc(tn.ID, doc.ID)
	if got.Status != recorded || got.JobID != job.ID {
		f.t.Fatalf("job gone: Status %s, JobID %d; want the recorded %s and %d", got.Status, got.JobID, recorded, job.ID)
	}
}
