package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/sqlite"
)

// fakeClock is a store clock the test moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Leases expire, and scheduled jobs come due, by the store's clock alone.
func TestDriver_StoreClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := &fakeClock{now: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)}
	d, err := sqlite.OpenConfig(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "docket.db"), Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	x := d.Executor()
	res, err := x.JobInsertMany(ctx, []*driver.JobInsertParams{
		{Queue: "q", Kind: "k", TenantID: "a", MaxAttempts: 3},
		{Queue: "q", Kind: "k", TenantID: "b", MaxAttempts: 3, RunAt: clock.Now().Add(time.Hour)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res[0].Job.CreatedAt.Equal(clock.Now()) || res[1].Job.State != queue.StateScheduled {
		t.Fatalf("inserted %+v / %+v: want CreatedAt at the store clock and the second scheduled", res[0].Job, res[1].Job)
	}
	jobs, _, err := x.JobClaim(ctx, &driver.JobClaimParams{Queue: "q", WorkerID: "w", Max: 5, LeaseDuration: 30 * time.Minute})
	if err != nil || len(jobs) != 1 || !jobs[0].LeaseExpiresAt.Equal(clock.Now().Add(30*time.Minute)) {
		t.Fatalf("claim: %+v, %v", jobs, err)
	}
	clock.Add(29 * time.Minute)
	if got, err := x.JobRescue(ctx, &driver.JobRescueParams{Limit: 10}); err != nil || len(got) != 0 {
		t.Fatalf("rescue before expiry: %d jobs, %v", len(got), err)
	}
	clock.Add(2 * time.Minute)
	got, err := x.JobRescue(ctx, &driver.JobRescueParams{Limit: 10})
	if err != nil || len(got) != 1 || got[0].State != queue.StatePending {
		t.Fatalf("rescue after expiry: %+v, %v", got, err)
	}
	if n, err := x.JobSchedule(ctx, &driver.JobScheduleParams{Limit: 10}); err != nil || n != 0 {
		t.Fatalf("schedule at +31m moved %d (%v), want 0 (due at +1h)", n, err)
	}
	clock.Add(30 * time.Minute)
	if n, err := x.JobSchedule(ctx, &driver.JobScheduleParams{Limit: 10}); err != nil || n != 1 {
		t.Fatalf("schedule at +61m moved %d (%v), want 1", n, err)
	}
}

// Begin inside a transaction is a savepoint: its rollback undoes only its
// own writes.
func TestExecutor_NestedBegin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := setup(t)
	outer, err := d.Executor().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = outer.Rollback(ctx) }()
	insert := func(x driver.Executor, tenant string) int64 {
		t.Helper()
		res, err := x.JobInsertMany(ctx, []*driver.JobInsertParams{{Queue: "q", Kind: "k", TenantID: tenant, MaxAttempts: 1}})
		if err != nil {
			t.Fatal(err)
		}
		return res[0].Job.ID
	}
	kept := insert(outer, "a")
	inner, err := outer.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	undone := insert(inner, "b")
	if err := inner.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := inner.Rollback(ctx); err != nil {
		t.Fatalf("second Rollback: %v", err)
	}
	if err := outer.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := outer.Rollback(ctx); err != nil {
		t.Fatalf("Rollback after Commit: %v", err)
	}
	if _, err := d.Executor().JobGet(ctx, kept); err != nil {
		t.Fatalf("outer insert: %v", err)
	}
	if _, err := d.Executor().JobGet(ctx, undone); !errors.Is(err, queue.ErrNotFound) {
		t.Fatalf("rolled-back inner insert: %v, want ErrNotFound", err)
	}
}

// A failing operation inside the caller's transaction leaves nothing of
// itself behind, and the transaction goes on.
func TestExecutor_AtomicInCallerTx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := setup(t)
	tx, err := d.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	x, err := d.UnwrapTx(tx)
	if err != nil {
		t.Fatal(err)
	}
	ok := &driver.JobInsertParams{Queue: "q", Kind: "k", TenantID: "a", MaxAttempts: 1}
	bad := &driver.JobInsertParams{Queue: "q", Kind: "k", TenantID: ""}
	if _, err := x.JobInsertMany(ctx, []*driver.JobInsertParams{ok, bad}); !errors.Is(err, queue.ErrInvalid) {
		t.Fatalf("insert with an invalid job: %v, want ErrInvalid", err)
	}
	if _, err := x.JobInsertMany(ctx, []*driver.JobInsertParams{ok}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if jobs, err := d.Executor().JobList(ctx, &queue.JobListParams{}); err != nil || len(jobs) != 1 {
		t.Fatalf("%d jobs (%v), want the one of the second insert", len(jobs), err)
	}
}

func TestOpen_Invalid(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, cfg := range []sqlite.Config{
		{Path: ""},
		{Path: ":memory:"},
		{Path: "file:x.db?mode=memory"},
		{Path: filepath.Join(dir, "a?b.db")},
		{Path: filepath.Join(dir, "x.db"), Synchronous: "sometimes"},
	} {
		if d, err := sqlite.OpenConfig(context.Background(), cfg); !errors.Is(err, queue.ErrInvalid) {
			if d != nil {
				_ = d.Close()
			}
			t.Errorf("OpenConfig(%+v): %v, want ErrInvalid", cfg, err)
		}
	}
	if _, err := sqlite.Open(context.Background(), filepath.Join(dir, "missing", "x.db")); err == nil {
		t.Error("Open in a missing directory succeeded")
	}
}
