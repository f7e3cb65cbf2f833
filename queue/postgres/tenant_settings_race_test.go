package postgres_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue/driver"
)

// A tenant's claim row created by an insert still in progress (EnqueueTx
// in an application's transaction) is invisible to the statements that
// change every row of the tenant (tenantResumeSQL, refreshLimitsSQL):
// before migration 019 the row kept what the insert copied at creation.
// Now the change waits for the insert's commit (the settings lock, see
// settingsLockSQL) and then sees the row; before it, each test below
// failed as its comment says.

// TestTenantSettings_ResumeMissesRowOfInsertInProgress: tenant a is paused; an
// application's transaction enqueues a's first job in queue q (the trigger
// creates the claim row paused); a resume commits while that transaction
// is open; the transaction commits. The tenant is no longer paused
// (PauseList says so), yet its row in q stays paused and no claim ever
// takes its job.
func TestTenantSettings_ResumeMissesRowOfInsertInProgress(t *testing.T) {
	t.Parallel()
	f := setup(t)
	if err := f.x.TenantPauseSet(f.ctx, &driver.TenantPauseParams{TenantID: "a", Paused: true}); err != nil {
		t.Fatal(err)
	}
	tx, x := f.appTx()
	if _, err := x.JobInsertMany(f.ctx, []*driver.JobInsertParams{job("a")}); err != nil {
		t.Fatal(err)
	}
	if err := f.commitDuring(tx, func() error {
		return f.x.TenantPauseSet(f.ctx, &driver.TenantPauseParams{TenantID: "a", Paused: false})
	}); err != nil {
		t.Fatal(err)
	}
	pauses, err := f.x.PauseList(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pauses.Tenants["a"]; ok {
		t.Fatal("tenant a still listed as paused after the resume")
	}
	// The schedule sweep (with its repair) does not help either.
	if _, err := f.x.JobSchedule(f.ctx, &driver.JobScheduleParams{}); err != nil {
		t.Fatal(err)
	}
	got := f.claim(f.x, 10)
	if len(got) != 1 {
		paused := f.queryInt(`SELECT count(*) FROM docket_tenant_queues WHERE tenant_id = 'a' AND paused`)
		t.Fatalf("claim after the resume got %d jobs, want a's one pending job (claim rows of a still paused: %d)", len(got), paused)
	}
}

// TestTenantSettings_LimitChangeMissesRowOfInsertInProgress: a's limit
// in q is 3 (an override of the tenant, or the queue's default); an
// application's transaction enqueues a's first jobs in q (the claim row is
// created with max_running 3); the limit goes back to 1 (the override
// removed, or the default lowered) while that transaction is open; it
// commits. The row kept max_running 3, and three of a's jobs ran at once
// against a limit of 1.
func TestTenantSettings_LimitChangeMissesRowOfInsertInProgress(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name          string
		before, after func(f *fixture) error
	}{
		{"tenant override", func(f *fixture) error {
			return f.x.TenantLimitSet(f.ctx, &driver.TenantLimitParams{TenantID: "a", MaxRunning: 3})
		}, func(f *fixture) error {
			return f.x.TenantLimitSet(f.ctx, &driver.TenantLimitParams{TenantID: "a", MaxRunning: 0})
		}},
		{"queue default", func(f *fixture) error {
			return f.x.QueueConfigSet(f.ctx, &driver.QueueConfigParams{Queue: "q", DefaultTenantLimit: 3})
		}, func(f *fixture) error {
			return f.x.QueueConfigSet(f.ctx, &driver.QueueConfigParams{Queue: "q", DefaultTenantLimit: 1})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			if err := c.before(f); err != nil {
				t.Fatal(err)
			}
			tx, x := f.appTx()
			if _, err := x.JobInsertMany(f.ctx, []*driver.JobInsertParams{job("a"), job("a"), job("a")}); err != nil {
				t.Fatal(err)
			}
			if err := f.commitDuring(tx, func() error { return c.after(f) }); err != nil {
				t.Fatal(err)
			}
			limit := f.queryInt(`SELECT docket_tenant_limit('q', 'a')`)
			if got := f.claim(f.x, 10); int64(len(got)) > limit {
				t.Fatalf("tenant a runs %d jobs at once, its limit is %d (claim row max_running %d)",
					len(got), limit, f.queryInt(`SELECT max_running FROM docket_tenant_queues WHERE queue = 'q' AND tenant_id = 'a'`))
			}
		})
	}
}

// TestTenantSettings_ConcurrentLimitChanges: two limit changes of one tenant
// whose transactions overlap. Tenant a has an override of 5 in q and of 10
// in every queue. One change removes the q override (the limit in q falls
// back to 10) and has refreshed the row, not yet committed; meanwhile
// another lowers the all-queues override to 1: its refresh reads the q
// override its snapshot still sees (5), finds the row (5 as committed)
// unchanged and skips it. Both commit: the limit is 1, the row says 10.
func TestTenantSettings_ConcurrentLimitChanges(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for _, p := range []*driver.TenantLimitParams{
		{TenantID: "a", Queue: "q", MaxRunning: 5},
		{TenantID: "a", MaxRunning: 10},
	} {
		if err := f.x.TenantLimitSet(f.ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	f.enqueue(4, "a")
	tx, x := f.appTx()
	if err := x.TenantLimitSet(f.ctx, &driver.TenantLimitParams{TenantID: "a", Queue: "q", MaxRunning: 0}); err != nil {
		t.Fatal(err)
	}
	if err := f.commitDuring(tx, func() error {
		return f.x.TenantLimitSet(f.ctx, &driver.TenantLimitParams{TenantID: "a", MaxRunning: 1})
	}); err != nil {
		t.Fatal(err)
	}
	limit := f.queryInt(`SELECT docket_tenant_limit('q', 'a')`)
	if got := f.claim(f.x, 10); int64(len(got)) > limit {
		t.Fatalf("tenant a runs %d jobs at once, its limit is %d (claim row max_running %d)",
			len(got), limit, f.queryInt(`SELECT max_running FROM docket_tenant_queues WHERE queue = 'q' AND tenant_id = 'a'`))
	}
}

// commitDuring runs change while tx is open and commits tx once change has
// returned or waits for a lock (as a change of a pause or a limit now
// waits for an insert that creates a claim row), and returns change's
// error.
func (f *fixture) commitDuring(tx pgx.Tx, change func() error) error {
	f.t.Helper()
	done := make(chan error, 1)
	go func() { done <- change() }()
	deadline := time.Now().Add(10 * time.Second)
	for f.queryInt(`SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`) == 0 {
		select {
		case err := <-done:
			if cerr := tx.Commit(f.ctx); cerr != nil {
				f.t.Fatal(cerr)
			}
			return err
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			f.t.Fatal("the change neither returned nor waited for a lock in 10 s")
		}
	}
	if err := tx.Commit(f.ctx); err != nil {
		f.t.Fatal(err)
	}
	return <-done
}

// TestTenantSettings_ChangeYieldsToApplication: an application's
// transaction holds a tenant row (it woke it) and then creates another
// row of the tenant, waiting for the tenant's settings lock, which a
// change holds while it waits for the first row: a cycle. PostgreSQL's
// deadlock detector aborts whichever waiter's deadlock_timeout runs out
// first, and that was the application's EnqueueTx when it began waiting
// first. The change now bounds its row waits (settingsLockTimeout), gives
// way and runs again. Here a third transaction holding a's limit row only
// orders the waits: in production the application's second insert lands
// between the change's lock statement and its refresh reaching the row.
func TestTenantSettings_ChangeYieldsToApplication(t *testing.T) {
	t.Parallel()
	f := setup(t)
	if err := f.x.TenantLimitSet(f.ctx, &driver.TenantLimitParams{TenantID: "a", MaxRunning: 2}); err != nil {
		t.Fatal(err)
	}
	f.enqueue(1, "a")
	f.exec(`UPDATE docket_tenant_queues SET has_work = false WHERE tenant_id = 'a'`) // as a claim leaves an idle tenant
	waiters := func() int64 {
		return f.queryInt(`SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`)
	}
	waitFor := func(n int64) {
		deadline := time.Now().Add(10 * time.Second)
		for waiters() < n {
			if time.Now().After(deadline) {
				t.Fatalf("fewer than %d lock waiters after 10 s", n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	// The application's transaction: a's job in q (wakes, and locks, a's row in q).
	app, ax := f.appTx()
	if _, err := ax.JobInsertMany(f.ctx, []*driver.JobInsertParams{job("a")}); err != nil {
		t.Fatal(err)
	}

	// Orders the waits only (see above).
	hold, err := f.d.Pool().Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback(f.ctx)
	if _, err := hold.Exec(f.ctx, `SELECT FROM docket_tenant_limits WHERE tenant_id = 'a' AND queue = '' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}

	change := make(chan error, 1)
	go func() {
		change <- f.x.TenantLimitSet(f.ctx, &driver.TenantLimitParams{TenantID: "a", MaxRunning: 5})
	}()
	waitFor(1) // the change holds the settings lock and waits for hold

	insert := make(chan error, 1)
	go func() {
		p := job("a")
		p.Queue = "q2" // a's first job in q2: the trigger takes the settings lock shared
		_, err := ax.JobInsertMany(f.ctx, []*driver.JobInsertParams{p})
		insert <- err
	}()
	// Before the fix both waited here, and the deadlock detector chose the
	// application's insert; now the change gives up its wait for hold
	// (settingsLockTimeout) and its lock with it, and the insert goes on.
	deadline := time.Now().Add(10 * time.Second)
	for len(insert) == 0 && waiters() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the insert neither returned nor waited in 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := hold.Commit(f.ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-insert; err != nil {
		t.Fatalf("the application's EnqueueTx failed: %v", err)
	}
	if err := app.Commit(f.ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-change; err != nil {
		t.Fatal(err)
	}
	if got := f.queryInt(`SELECT count(*) FROM docket_tenant_queues WHERE tenant_id = 'a' AND max_running <> 5`); got != 0 {
		t.Errorf("%d of a's claim rows without the new limit 5", got)
	}
}

// TestTenantSettings_NoWaitAcrossTenants: with one settings lock for the
// whole database (019 as first written), an application's transaction
// that created tenant a's claim row held it shared to its commit; a pause
// of an unrelated tenant c queued for it exclusively; and every later
// insert that created a claim row -- tenant b's first job, a plain
// Enqueue -- queued behind the pause until a's application committed.
// The locks are per tenant and per queue now.
func TestTenantSettings_NoWaitAcrossTenants(t *testing.T) {
	t.Parallel()
	f := setup(t)
	app, ax := f.appTx()
	if _, err := ax.JobInsertMany(f.ctx, []*driver.JobInsertParams{job("a")}); err != nil {
		t.Fatal(err)
	}
	pause := make(chan error, 1)
	// A tenant c in neither a's nor b's bucket of the settings locks.
	c := f.queryString(`SELECT n FROM (SELECT 'c' || g AS n FROM generate_series(0, 99) g) c
WHERE hashtext(n) & 31 NOT IN (hashtext('a') & 31, hashtext('b') & 31) LIMIT 1`)
	go func() { pause <- f.x.TenantPauseSet(f.ctx, &driver.TenantPauseParams{TenantID: c, Paused: true}) }()
	insert := make(chan error, 1)
	go func() {
		time.Sleep(200 * time.Millisecond) // after the pause queued
		_, err := f.x.JobInsertMany(f.ctx, []*driver.JobInsertParams{job("b")})
		insert <- err
	}()
	select {
	case err := <-insert:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(3 * time.Second):
		t.Errorf("tenant b's Enqueue blocked 3 s by tenant a's open application transaction and tenant c's pause (pause returned: %v)", len(pause) > 0)
	}
	select {
	case err := <-pause:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(3 * time.Second):
		t.Error("tenant c's pause waited for tenant a's application transaction")
	}
	if err := app.Commit(f.ctx); err != nil {
		t.Fatal(err)
	}
}
