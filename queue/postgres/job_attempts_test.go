package postgres_test

import (
	"testing"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// TestJobAttempts_CompletedFromRow: the attempt that completes a job is read
// from the job's row, not written as a record (finishSQL); the other
// outcomes keep their records, and a completing record written before
// migration 013 is listed once.
func TestJobAttempts_CompletedFromRow(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.enqueue(1, "a", "b", "c")
	jobs := f.claim(f.x, 3)
	if len(jobs) != 3 {
		t.Fatalf("claimed %d, want 3", len(jobs))
	}
	done, failed, old := jobs[0], jobs[1], jobs[2]
	errs, err := f.x.JobFinish(f.ctx, []*driver.JobFinishParams{
		{Lease: done.Lease(), Outcome: queue.OutcomeCompleted, WorkerID: "w"},
		{Lease: failed.Lease(), Outcome: queue.OutcomeFailed, Error: "bad", WorkerID: "w"},
		{Lease: old.Lease(), Outcome: queue.OutcomeCompleted, WorkerID: "w"},
	})
	if err != nil || errs[0] != nil || errs[1] != nil || errs[2] != nil {
		t.Fatalf("finish: %v %v", err, errs)
	}
	for _, c := range []struct {
		job  *queue.Job
		want int64
	}{{done, 0}, {failed, 1}, {old, 0}} {
		if n := f.queryInt(`SELECT count(*) FROM docket_job_attempts WHERE job_id = $1`, c.job.ID); n != c.want {
			t.Fatalf("job %d: %d attempt records stored, want %d", c.job.ID, n, c.want)
		}
	}
	// What finishSQL wrote for a completion before migration 013.
	f.exec(`INSERT INTO docket_job_attempts (job_id, attempt, worker_id, started_at, finished_at, outcome)
	        SELECT id, attempt, worker_id, started_at, completed_at, 'completed' FROM docket_jobs WHERE id = $1`, old.ID)
	for _, j := range []*queue.Job{done, failed, old} {
		as, err := f.x.JobAttempts(f.ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := queue.OutcomeCompleted
		if j == failed {
			want = queue.OutcomeFailed
		}
		if len(as) != 1 || as[0].Outcome != want || as[0].Attempt != 1 || as[0].WorkerID != "w" {
			t.Fatalf("job %d attempts %+v; want one, attempt 1, %s by w", j.ID, as, want)
		}
	}
}
