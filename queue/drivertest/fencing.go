package drivertest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// testFencing: once attempt 1 lost its lease to a
// rescue and attempt 2 runs, no write of attempt 1 changes anything.
func (s *suite) testFencing(t *testing.T) {
	t.Run("EveryWrite", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		old, cur := f.zombies(1)
		id := cur[0].ID
		before := f.get(id)
		for _, w := range zombieWrites(f, old[0].Lease()) {
			if err := w.do(); err != nil {
				t.Fatalf("attempt 1 %s: %v", w.name, err)
			}
			unchanged(t, before, f.get(id))
		}
		f.progress(cur[0].Lease(), "a2", 50, "a2")
		f.complete(cur[0])
		after := f.wantState(id, queue.StateCompleted)
		for _, w := range zombieWrites(f, old[0].Lease()) {
			if err := w.do(); err != nil {
				t.Fatalf("attempt 1 %s after attempt 2 completed: %v", w.name, err)
			}
			unchanged(t, after, f.get(id))
		}
		wantAttempts(t, f.attempts(id),
			attemptWant{1, queue.OutcomeTimedOut, anyError}, attemptWant{2, queue.OutcomeCompleted, ""})
	})
	t.Run("RandomInterleavings", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		const n, workers = 100, 8
		old, cur := f.zombies(n)
		finals := make([]queue.Outcome, n)
		next := make(chan int)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(w), 7))
				for i := range next {
					finals[i] = f.interleave(rng, old[i].Lease(), cur[i].Lease())
				}
			})
		}
		for i := range n {
			next <- i
		}
		close(next)
		wg.Wait()
		if t.Failed() {
			return
		}
		for i := range n {
			f.wantDecidedBy(cur[i].ID, finals[i])
		}
	})
}

// zombies returns n jobs of n tenants twice: as attempt 1 claimed them
// (their lease since expired and rescued) and as attempt 2 holds them.
func (f *fixture) zombies(n int) (old, cur []*queue.Job) {
	f.t.Helper()
	ps := make([]*driver.JobInsertParams, n)
	for i := range ps {
		ps[i] = params(fmt.Sprintf("z%d", i))
	}
	f.insert(ps...)
	old = f.claimAll(n, shortLease)
	f.rescueUntil(ids(old)...)
	byID := make(map[int64]*queue.Job, n)
	for _, j := range f.claimAll(n, longLease) {
		if j.Attempt != 2 {
			f.t.Fatalf("reclaimed %s, want attempt 2", describe(j))
		}
		byID[j.ID] = j
	}
	for _, j := range old {
		if j.Attempt != 1 {
			f.t.Fatalf("first claim %s, want attempt 1", describe(j))
		}
		cur = append(cur, byID[j.ID])
	}
	return old, cur
}

// claimAll claims from testQueue until it holds n jobs.
func (f *fixture) claimAll(n int, lease time.Duration) []*queue.Job {
	f.t.Helper()
	var jobs []*queue.Job
	eventually(f.t, fmt.Sprintf("%d jobs claimed", n), func() bool {
		jobs = append(jobs, f.claim(testQueue, n-len(jobs), lease)...)
		return len(jobs) == n
	})
	return jobs
}

type zombieWrite struct {
	name string
	do   func() error // nil when the write was fenced off
}

// zombieWrites lists every write attempt 1 can make with its lost lease;
// each returns nil when the store refused it as it must.
func zombieWrites(f *fixture, l queue.Lease) []zombieWrite {
	writes := []zombieWrite{
		{"heartbeat", func() error {
			got, err := f.x.JobHeartbeat(f.ctx, &driver.JobHeartbeatParams{Leases: []queue.Lease{l}, LeaseDuration: time.Hour})
			if err != nil {
				return err
			}
			if len(got) != 0 {
				return fmt.Errorf("renewed lost lease: %+v", got)
			}
			return nil
		}},
		{"progress", func() error {
			err := f.x.JobProgress(f.ctx, &driver.JobProgressParams{Lease: l, Stage: "a1", Percent: 1, Message: "a1"})
			return fenced(err)
		}},
	}
	for _, p := range finishParams("a1") {
		p.Lease = l
		writes = append(writes, zombieWrite{fmt.Sprintf("finish %s (retry in %v)", p.Outcome, p.RetryIn), func() error {
			errs, err := f.x.JobFinish(f.ctx, []*driver.JobFinishParams{p})
			if err != nil {
				return err
			}
			return fenced(errs[0])
		}})
	}
	return writes
}

// finishParams returns a finish of every outcome, tagged with who.
func finishParams(who string) []*driver.JobFinishParams {
	result := json.RawMessage(fmt.Sprintf(`{"by": %q}`, who))
	return []*driver.JobFinishParams{
		{Outcome: queue.OutcomeCompleted, Result: result, WorkerID: who},
		{Outcome: queue.OutcomeRetry, Error: who, WorkerID: who},
		{Outcome: queue.OutcomeRetry, Error: who, RetryIn: time.Hour, WorkerID: who},
		{Outcome: queue.OutcomeFailed, Error: who, WorkerID: who},
		{Outcome: queue.OutcomeSnoozed, RetryIn: time.Hour, WorkerID: who},
		{Outcome: queue.OutcomeReleased, WorkerID: who},
	}
}

func fenced(err error) error {
	if errors.Is(err, queue.ErrLeaseLost) {
		return nil
	}
	if err == nil {
		return errors.New("accepted, want ErrLeaseLost")
	}
	return fmt.Errorf("want ErrLeaseLost, got: %w", err)
}

// interleave races attempt 1's writes, in random order, against attempt 2
// doing its work and finishing with a random outcome, which it returns.
func (f *fixture) interleave(rng *rand.Rand, old, cur queue.Lease) queue.Outcome {
	writes := zombieWrites(f, old)
	rng.Shuffle(len(writes), func(i, j int) { writes[i], writes[j] = writes[j], writes[i] })
	final := []queue.Outcome{queue.OutcomeCompleted, queue.OutcomeFailed, queue.OutcomeRetry, queue.OutcomeSnoozed}[rng.IntN(4)]
	steps := rng.IntN(4)
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, w := range writes {
			if err := w.do(); err != nil {
				f.t.Errorf("job %d: attempt 1 %s: %v", old.JobID, w.name, err)
			}
		}
	})
	wg.Go(func() {
		for i := range steps {
			err := f.x.JobProgress(f.ctx, &driver.JobProgressParams{Lease: cur, Stage: "a2", Percent: 10 * i, Message: "a2"})
			if err != nil {
				f.t.Errorf("job %d: attempt 2 progress: %v", cur.JobID, err)
			}
			got, err := f.x.JobHeartbeat(f.ctx, &driver.JobHeartbeatParams{Leases: []queue.Lease{cur}, LeaseDuration: time.Hour})
			if err != nil || len(got) != 1 {
				f.t.Errorf("job %d: attempt 2 heartbeat: %v, %d leases held", cur.JobID, err, len(got))
			}
		}
		p := &driver.JobFinishParams{Lease: cur, Outcome: final, Error: "a2", Result: json.RawMessage(`{"by": "a2"}`), WorkerID: "a2"}
		if final == queue.OutcomeRetry || final == queue.OutcomeSnoozed {
			p.RetryIn = time.Hour
		}
		if final == queue.OutcomeCompleted || final == queue.OutcomeSnoozed {
			p.Error = ""
		}
		errs, err := f.x.JobFinish(f.ctx, []*driver.JobFinishParams{p})
		if err == nil {
			err = errs[0]
		}
		if err != nil {
			f.t.Errorf("job %d: attempt 2 finish %s: %v", cur.JobID, final, err)
		}
	})
	wg.Wait()
	return final
}

// wantDecidedBy fails t unless the job is exactly as attempt 2 left it.
func (f *fixture) wantDecidedBy(id int64, final queue.Outcome) {
	f.t.Helper()
	j := f.get(id)
	want := map[queue.Outcome]struct {
		state   queue.State
		attempt int
		err     string
	}{
		queue.OutcomeCompleted: {queue.StateCompleted, 2, ""},
		queue.OutcomeFailed:    {queue.StateFailed, 2, "a2"},
		queue.OutcomeRetry:     {queue.StateScheduled, 2, "a2"},
		queue.OutcomeSnoozed:   {queue.StateScheduled, 1, ""},
	}[final]
	if j.State != want.state || j.Attempt != want.attempt || j.Stage == "a1" || j.ProgressMessage == "a1" ||
		(want.err != "" && j.ErrorMessage != want.err) {
		f.t.Fatalf("attempt 2 finished %s; job is %+v, want state %s, attempt %d, error %q, nothing of attempt 1",
			final, j, want.state, want.attempt, want.err)
	}
	if final == queue.OutcomeCompleted {
		sameJSON(f.t, "Result", j.Result, json.RawMessage(`{"by": "a2"}`))
	}
	wantAttempts(f.t, f.attempts(id),
		attemptWant{1, queue.OutcomeTimedOut, anyError}, attemptWant{2, final, want.err})
}
