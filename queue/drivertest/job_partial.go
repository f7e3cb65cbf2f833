package drivertest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// testJobProgressPartial checks the partial result a progress report may
// carry (queue.JobProgressParams.PartialResult): stored with the progress,
// kept by a report without one and by every end of an attempt, returned by
// every read of the job, refused past queue.MaxPartialResultBytes.
func (s *suite) testJobProgressPartial(t *testing.T) {
	t.Run("StoredAndReplaced", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		j := f.claimOne()
		if j.PartialResult != nil {
			t.Fatalf("claimed job has partial result %s before any report", j.PartialResult)
		}
		f.progressPartial(j.Lease(), "parsing", 50, `{"pages": 2, "title": "Harbour survey"}`)
		wantPartial(t, "after a report", f.get(j.ID), `{"title":"Harbour survey","pages":2}`)
		f.progress(j.Lease(), "chunking", 60, "a report without one")
		got := f.wantState(j.ID, queue.StateRunning)
		if got.Stage != "chunking" || got.Progress != 60 {
			t.Fatalf("progress (%q, %d), want (chunking, 60)", got.Stage, got.Progress)
		}
		wantPartial(t, "after a report without one", got, `{"pages":2,"title":"Harbour survey"}`)
		f.progressPartial(j.Lease(), "analyzing", 90, `{"pages": 2, "phrases": ["storm damage"]}`)
		wantPartial(t, "after a second one", f.get(j.ID), `{"pages":2,"phrases":["storm damage"]}`)
		listed, err := f.x.JobList(f.ctx, &queue.JobListParams{TenantID: "a"})
		if err != nil {
			t.Fatalf("JobList: %v", err)
		}
		if len(listed) != 1 {
			t.Fatalf("listed %d jobs, want 1", len(listed))
		}
		wantPartial(t, "listed", listed[0], `{"pages":2,"phrases":["storm damage"]}`)
	})
	t.Run("KeptWhenAttemptsEnd", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		j := f.claimOne()
		f.progressPartial(j.Lease(), "parsing", 50, `{"pages": 3}`)
		if err := f.finish(&driver.JobFinishParams{Lease: j.Lease(), Outcome: queue.OutcomeRetry, Error: "boom"}); err != nil {
			t.Fatalf("retry: %v", err)
		}
		wantPartial(t, "waiting for its next attempt", f.wantState(j.ID, queue.StatePending), `{"pages":3}`)
		again := f.claimOne()
		if again.ID != j.ID || again.Stage != "" || again.Progress != 0 {
			t.Fatalf("claimed %s (stage %q, %d%%), want job %d again with its progress reset", describe(again), again.Stage, again.Progress, j.ID)
		}
		wantPartial(t, "claimed again", again, `{"pages":3}`)
		f.progress(again.Lease(), "parsing", 10, "")
		f.complete(again)
		done := f.wantState(j.ID, queue.StateCompleted)
		wantPartial(t, "completed", done, `{"pages":3}`)
	})
	t.Run("Refused", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		j := f.claimOne()
		f.progressPartial(j.Lease(), "parsing", 50, `{"pages": 3}`)
		big := `{"text": "` + strings.Repeat("x", queue.MaxPartialResultBytes) + `"}`
		fits := `"` + strings.Repeat("y", queue.MaxPartialResultBytes-2) + `"`
		for _, c := range []struct{ name, partial string }{{"TooLarge", big}, {"NotJSON", `{"pages":`}} {
			err := f.x.JobProgress(f.ctx, &driver.JobProgressParams{Lease: j.Lease(), Stage: "x", Percent: 70, PartialResult: json.RawMessage(c.partial)})
			wantErr(t, "JobProgress "+c.name, err, queue.ErrInvalid)
		}
		got := f.get(j.ID)
		if got.Stage != "parsing" || got.Progress != 50 {
			t.Fatalf("a refused report changed the progress: (%q, %d)", got.Stage, got.Progress)
		}
		wantPartial(t, "after refused reports", got, `{"pages":3}`)
		f.progressPartial(j.Lease(), "parsing", 55, fits)
		if n := len(f.get(j.ID).PartialResult); n != queue.MaxPartialResultBytes {
			t.Fatalf("a partial result of exactly the limit stored as %d bytes", n)
		}
	})
	t.Run("LeaseLost", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		j := f.claimOne()
		forged := j.Lease()
		forged.Token++
		err := f.x.JobProgress(f.ctx, &driver.JobProgressParams{Lease: forged, Stage: "zombie", PartialResult: json.RawMessage(`{"zombie":true}`)})
		wantErr(t, "JobProgress with a forged lease", err, queue.ErrLeaseLost)
		if got := f.get(j.ID).PartialResult; got != nil {
			t.Fatalf("a report with a lost lease stored %s", got)
		}
	})
	t.Run("RolledBack", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueue("a")
		j := f.claimOne()
		tx, err := f.x.Begin(f.ctx)
		if err != nil {
			t.Fatalf("Begin: %v", err)
		}
		err = tx.JobProgress(f.ctx, &driver.JobProgressParams{Lease: j.Lease(), Stage: "s", Percent: 1, PartialResult: json.RawMessage(`{"n":1}`)})
		if err != nil {
			t.Fatalf("JobProgress in a transaction: %v", err)
		}
		if err := tx.Rollback(f.ctx); err != nil {
			t.Fatalf("Rollback: %v", err)
		}
		if got := f.get(j.ID).PartialResult; got != nil {
			t.Fatalf("a rolled-back report stored %s", got)
		}
	})
}

// progressPartial reports progress with a partial result and a lease that
// must be held.
func (f *fixture) progressPartial(l queue.Lease, stage string, percent int, partial string) {
	f.t.Helper()
	err := f.x.JobProgress(f.ctx, &driver.JobProgressParams{Lease: l, Stage: stage, Percent: percent, PartialResult: json.RawMessage(partial)})
	if err != nil {
		f.t.Fatalf("JobProgress(%+v, %s): %v", l, partial, err)
	}
}

// wantPartial fails t unless j's partial result is the JSON document want
// (compared as values: a store may normalise the text, as jsonb does).
func wantPartial(t *testing.T, when string, j *queue.Job, want string) {
	t.Helper()
	var got, exp any
	if err := json.Unmarshal(j.PartialResult, &got); err != nil {
		t.Fatalf("%s: partial result %q: %v", when, j.PartialResult, err)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatalf("bad test value %q: %v", want, err)
	}
	if !reflect.DeepEqual(got, exp) {
		t.Fatalf("%s: partial result %s, want %s", when, j.PartialResult, want)
	}
}
