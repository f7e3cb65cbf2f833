package pipeline_test

import (
	"slices"
	"testing"
	"time"

	"github.com/docketq/docket/pipeline"
	"github.com/docketq/docket/pipeline/extract"
	"github.com/docketq/docket/queue"
)

// A document whose parse is not admitted by the memory budget in time is
// snoozed, spending no attempt, and completes once the budget frees up.
func TestProcessor_MemoryBudgetTaken(t *testing.T) {
	t.Parallel()
	budget := extract.NewBudget(extract.BudgetConfig{Bytes: 1 << 20, Wait: 20 * time.Millisecond})
	e := setup(t, "sqlite", pipeline.Config{Extract: extract.Options{Budget: budget}, BusyDelay: 10 * time.Millisecond})
	release, err := budget.Acquire(e.ctx, budget.Size())
	if err != nil {
		t.Fatal(err)
	}
	_, id := e.upload(tenantA, extract.TypeText, []byte("Waits for the memory budget."))
	snoozed := func() bool {
		as, err := e.client.Attempts(e.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(as, func(a *queue.Attempt) bool { return a.Outcome == queue.OutcomeSnoozed })
	}
	deadline := time.Now().Add(waitLimit)
	for !snoozed() {
		if time.Now().After(deadline) {
			t.Fatal("the job was not snoozed while the budget was taken")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if job, err := e.client.Get(e.ctx, id); err != nil || job.State.Finished() {
		t.Fatalf("job while the budget is taken: %+v, %v", job, err)
	}
	release()
	if job := e.wait(id); job.State != queue.StateCompleted {
		t.Fatalf("job %s: %s", job.State, job.ErrorMessage)
	}
	as, err := e.client.Attempts(e.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(slices.DeleteFunc(as, func(a *queue.Attempt) bool { return a.Outcome == queue.OutcomeSnoozed })); n != 1 {
		t.Errorf("%d attempts spent, want 1", n)
	}
}
