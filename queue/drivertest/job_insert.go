package drivertest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

func (s *suite) testDriver(t *testing.T) {
	t.Run("Capabilities", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		caps := f.d.Capabilities()
		if n := f.d.Notifier(); caps.Notify != (n != nil) {
			t.Fatalf("Capabilities().Notify = %v but Notifier() = %v", caps.Notify, n)
		}
	})
	t.Run("MigrateConcurrent", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() { errs[i] = f.d.Migrate(f.ctx) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("Migrate #%d on a migrated store: %v", i, err)
			}
		}
		f.enqueue("a")
		f.claimOne()
	})
	t.Run("UnwrapTxInvalid", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		for _, tx := range []any{nil, "tx", struct{}{}, f.x} {
			_, err := f.d.UnwrapTx(tx)
			wantErr(t, fmt.Sprintf("UnwrapTx(%T)", tx), err, queue.ErrInvalid)
		}
	})
}

func (s *suite) testJobInsertMany(t *testing.T) {
	t.Run("Defaults", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		before := time.Now()
		p := &driver.JobInsertParams{
			Queue: testQueue, Kind: "send", TenantID: "acme",
			Args: json.RawMessage(`{"n": 1, "s": "x"}`), MaxAttempts: 5,
			FailOnTimeout: true, RetryOf: 0,
		}
		res := f.insert(p)[0]
		if res.Duplicate {
			t.Fatal("first insert reported Duplicate")
		}
		for _, j := range []*queue.Job{res.Job, f.get(res.Job.ID)} {
			if j.ID <= 0 {
				t.Fatalf("ID = %d, want > 0", j.ID)
			}
			if j.Queue != p.Queue || j.Kind != p.Kind || j.TenantID != p.TenantID ||
				j.MaxAttempts != 5 || !j.FailOnTimeout || j.UniqueKey != "" || j.RetryOf != 0 {
				t.Fatalf("stored %+v, want the params %+v", j, p)
			}
			sameJSON(t, "Args", j.Args, p.Args)
			if j.State != queue.StatePending || j.Attempt != 0 || j.Priority != 0 || j.Progress != 0 ||
				j.ErrorMessage != "" || j.LeaseToken != 0 || !j.StartedAt.IsZero() || !j.CompletedAt.IsZero() {
				t.Fatalf("new job %+v: want pending, attempt 0, no progress, lease or times", j)
			}
			near(t, "RunAt", j.RunAt, before)
			near(t, "CreatedAt", j.CreatedAt, before)
			near(t, "UpdatedAt", j.UpdatedAt, before)
		}
	})
	t.Run("Metadata", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		with, without := params("acme"), params("acme")
		with.Metadata = map[string]string{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "é": "\"quoted\" \u2028"}
		res := f.insert(with, without)
		for _, j := range []*queue.Job{res[0].Job, f.get(res[0].Job.ID)} {
			if !reflect.DeepEqual(j.Metadata, with.Metadata) {
				t.Fatalf("metadata %q, want %q", j.Metadata, with.Metadata)
			}
		}
		if m := f.get(res[1].Job.ID).Metadata; m != nil {
			t.Fatalf("job without metadata reads %q, want nil", m)
		}
		if c := f.claimOne(); c.ID != res[0].Job.ID || !reflect.DeepEqual(c.Metadata, with.Metadata) {
			t.Fatalf("claimed %s with metadata %q, want job %d with %q", describe(c), c.Metadata, res[0].Job.ID, with.Metadata)
		}
	})
	t.Run("ResultOrder", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		var ps []*driver.JobInsertParams
		for i := range 20 {
			p := params("acme")
			p.Kind = "k" + string(rune('a'+i))
			ps = append(ps, p)
		}
		res := f.insert(ps...)
		for i, r := range res {
			if r.Job.Kind != ps[i].Kind {
				t.Fatalf("result %d is kind %q, want %q", i, r.Job.Kind, ps[i].Kind)
			}
			if i > 0 && r.Job.ID <= res[i-1].Job.ID {
				t.Fatalf("ids not in enqueue order: %d after %d", r.Job.ID, res[i-1].Job.ID)
			}
		}
		if got := f.insert(); len(got) != 0 {
			t.Fatalf("empty insert returned %d results", len(got))
		}
	})
	t.Run("ResultIsStoredJob", func(t *testing.T) {
		// Every field of a result is what JobGet reads back: a driver may
		// build results from the params rather than read the rows (the
		// PostgreSQL driver does), and must then fill in what the store
		// decides (id, state, times, args in the store's normal form) and
		// its defaults exactly. Duplicates are the jobs holding the key.
		t.Parallel()
		f := s.setup(t)
		first := params("acme")
		first.UniqueKey = "k-1"
		earlier := f.insert(first)[0].Job
		var ps []*driver.JobInsertParams
		add := func(edit func(p *driver.JobInsertParams)) {
			p := params("acme")
			edit(p)
			ps = append(ps, p)
		}
		add(func(p *driver.JobInsertParams) {})
		add(func(p *driver.JobInsertParams) {
			p.Args = json.RawMessage(` { "b" : [1, 2.50, "x"],  "a": {"z": null, "y": true} } `)
			p.Priority, p.MaxAttempts, p.FailOnTimeout = 7, 0, true
			p.Metadata = map[string]string{"traceparent": "00-x-y-01", "é": "\"q\""}
		})
		add(func(p *driver.JobInsertParams) { p.Args = nil; p.Metadata = map[string]string{} })
		add(func(p *driver.JobInsertParams) { p.TenantID, p.Kind, p.Priority = "globex", "other", -3 })
		add(func(p *driver.JobInsertParams) { p.RunAt = time.Now().Add(time.Hour) })
		add(func(p *driver.JobInsertParams) { p.RunAt = time.Now().Add(-time.Hour) })
		add(func(p *driver.JobInsertParams) { p.RetryOf = earlier.ID })
		add(func(p *driver.JobInsertParams) { p.UniqueKey = "k-2" })
		add(func(p *driver.JobInsertParams) { p.UniqueKey = "k-2"; p.Kind = "second" }) // this batch's
		add(func(p *driver.JobInsertParams) { p.UniqueKey = "k-1" })                    // the earlier job's
		res := f.insert(ps...)
		for i, r := range res {
			if want := i >= len(ps)-2; r.Duplicate != want {
				t.Errorf("result %d: Duplicate %v, want %v", i, r.Duplicate, want)
			}
			if diff := jobDiff(r.Job, f.get(r.Job.ID)); diff != "" {
				t.Errorf("result %d (%+v) differs from the stored job: %s", i, ps[i], diff)
			}
		}
		if res[len(ps)-2].Job.ID != res[len(ps)-3].Job.ID || res[len(ps)-1].Job.ID != earlier.ID {
			t.Errorf("duplicates are jobs %d and %d, want %d and %d",
				res[len(ps)-2].Job.ID, res[len(ps)-1].Job.ID, res[len(ps)-3].Job.ID, earlier.ID)
		}
		if res[4].Job.State != queue.StateScheduled || res[5].Job.State != queue.StatePending {
			t.Errorf("states %s (future RunAt) and %s (past RunAt), want scheduled and pending", res[4].Job.State, res[5].Job.State)
		}
	})
	t.Run("RunAt", func(t *testing.T) {
		t.Parallel()
		now := time.Now()
		for _, tc := range []struct {
			name  string
			runAt time.Time
			want  queue.State
		}{
			{"Zero", time.Time{}, queue.StatePending},
			{"Past", now.Add(-time.Minute), queue.StatePending},
			{"Future", now.Add(time.Hour), queue.StateScheduled},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				f := s.setup(t)
				p := params("acme")
				p.RunAt = tc.runAt
				j := f.insert(p)[0].Job
				if j.State != tc.want {
					t.Fatalf("state %s, want %s", j.State, tc.want)
				}
				if !tc.runAt.IsZero() {
					near(t, "RunAt", f.get(j.ID).RunAt, tc.runAt)
				}
			})
		}
	})
	t.Run("UniqueKey", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		p := params("acme")
		p.UniqueKey = "doc-1"
		first := f.insert(p)[0]
		if first.Duplicate || first.Job.UniqueKey != "doc-1" {
			t.Fatalf("first insert: duplicate %v, key %q", first.Duplicate, first.Job.UniqueKey)
		}
		again := params("acme")
		again.UniqueKey, again.Kind = "doc-1", "other-kind"
		other := params("globex")
		other.UniqueKey = "doc-1"
		res := f.insert(again, other, params("acme"), params("acme"))
		if !res[0].Duplicate || res[0].Job.ID != first.Job.ID || res[0].Job.Kind != testKind {
			t.Fatalf("same tenant and key: got %+v, want duplicate of job %d", res[0], first.Job.ID)
		}
		if res[1].Duplicate || res[1].Job.ID == first.Job.ID {
			t.Fatal("same key in another tenant must be a new job")
		}
		if res[2].Duplicate || res[3].Duplicate || res[2].Job.ID == res[3].Job.ID {
			t.Fatal("jobs without a key must never be duplicates")
		}
		dup := params("acme")
		dup.UniqueKey = "doc-2"
		res = f.insert(dup, dup)
		if res[0].Duplicate || !res[1].Duplicate || res[1].Job.ID != res[0].Job.ID {
			t.Fatalf("same key twice in one call: got %v/%v, ids %d/%d, want the second a duplicate of the first",
				res[0].Duplicate, res[1].Duplicate, res[0].Job.ID, res[1].Job.ID)
		}
		jobs := f.list(&queue.JobListParams{TenantID: "acme"})
		if len(jobs) != 4 {
			t.Fatalf("tenant acme has %d jobs, want 4", len(jobs))
		}
	})
	t.Run("UniqueKeyConcurrent", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		const n = 50
		results := make([]queue.InsertResult, n)
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				p := params("acme")
				p.UniqueKey = "same"
				<-start
				res, err := f.x.JobInsertMany(f.ctx, []*driver.JobInsertParams{p})
				if err == nil {
					results[i] = res[0]
				}
				errs[i] = err
			})
		}
		close(start)
		wg.Wait()
		created, dups := 0, 0
		var id int64
		for i, err := range errs {
			if err != nil {
				t.Fatalf("insert %d: %v", i, err)
			}
			if results[i].Duplicate {
				dups++
			} else {
				created++
			}
			if id == 0 {
				id = results[i].Job.ID
			} else if results[i].Job.ID != id {
				t.Fatalf("results name jobs %d and %d, want one job", id, results[i].Job.ID)
			}
		}
		if created != 1 || dups != n-1 {
			t.Fatalf("%d created, %d duplicates; want 1 and %d", created, dups, n-1)
		}
		if jobs := f.list(&queue.JobListParams{}); len(jobs) != 1 {
			t.Fatalf("%d rows stored, want 1", len(jobs))
		}
	})
	t.Run("Tx", func(t *testing.T) {
		t.Parallel()
		for _, commit := range []bool{false, true} {
			name := map[bool]string{false: "Rollback", true: "Commit"}[commit]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				f := s.setup(t)
				tx, err := f.x.Begin(f.ctx)
				if err != nil {
					t.Fatalf("Begin: %v", err)
				}
				defer func() { _ = tx.Rollback(context.WithoutCancel(f.ctx)) }()
				f.txEnqueue(tx, commit, func() error {
					if commit {
						return tx.Commit(f.ctx)
					}
					return tx.Rollback(f.ctx)
				})
			})
		}
	})
	t.Run("UnwrapTx", func(t *testing.T) {
		t.Parallel()
		if s.cfg.BeginNative == nil {
			t.Skip("Config.BeginNative not set: the suite cannot open a native transaction of this driver")
		}
		for _, commit := range []bool{false, true} {
			name := map[bool]string{false: "Rollback", true: "Commit"}[commit]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				f := s.setup(t)
				ntx := s.cfg.BeginNative(t, f.d)
				defer func() { _ = ntx.Rollback() }()
				x, err := f.d.UnwrapTx(ntx.Tx)
				if err != nil {
					t.Fatalf("UnwrapTx(%T): %v", ntx.Tx, err)
				}
				f.txEnqueue(x, commit, func() error {
					if commit {
						return ntx.Commit()
					}
					return ntx.Rollback()
				})
			})
		}
	})
}

// txEnqueue inserts a job through x, a transaction's executor, checks that
// only the transaction sees it, ends the transaction with end, and checks
// that the job exists if and only if it committed.
func (f *fixture) txEnqueue(x driver.Executor, commit bool, end func() error) {
	t := f.t
	t.Helper()
	j := insertWith(t, f.ctx, x, params("acme"))[0].Job
	if _, err := x.JobGet(f.ctx, j.ID); err != nil {
		t.Fatalf("JobGet inside the transaction: %v", err)
	}
	// A store that serialises connections would block here; the timeout
	// turns that into a failure instead of a hang.
	ctx, cancel := context.WithTimeout(f.ctx, 5*time.Second)
	_, err := f.x.JobGet(ctx, j.ID)
	cancel()
	wantErr(t, "JobGet outside the open transaction", err, queue.ErrNotFound)
	if err := end(); err != nil {
		t.Fatalf("end transaction: %v", err)
	}
	_, err = f.x.JobGet(f.ctx, j.ID)
	if !commit {
		wantErr(t, "JobGet after rollback", err, queue.ErrNotFound)
		f.claimNone()
		return
	}
	if err != nil {
		t.Fatalf("JobGet after commit: %v", err)
	}
	if got := f.claimOne(); got.ID != j.ID {
		t.Fatalf("claimed job %d, want the committed job %d", got.ID, j.ID)
	}
}

func (s *suite) testJobGet(t *testing.T) {
	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		j := f.enqueue("acme")
		for _, id := range []int64{0, -1, j.ID + 1, 1 << 50} {
			_, err := f.x.JobGet(f.ctx, id)
			wantErr(t, "JobGet of a missing job", err, queue.ErrNotFound)
		}
	})
}

// sameJSON fails t unless got and want encode the same JSON value.
func sameJSON(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s %q is not JSON: %v", what, got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want %s %q is not JSON: %v", what, want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s = %s, want %s", what, got, want)
	}
}
