package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// TestJobInsert_RunAtFallingDueMidInsertKeepsWakeUp: docket_insert_jobs
// decided which tenants' advisory locks to take with one reading of the
// clock (run_at <= clock_timestamp(), before its snapshot) and whether a
// job is pending with another (in the insert, after its lock waits). A job
// whose run_at fell due in between was inserted pending without its
// tenant's lock, and a claim could mark the tenant idle meanwhile (it got
// the lock exclusively) while the insert read has_work as still true: the
// job stayed pending with its tenant idle, unclaimable until a repair
// sweep. Here the insert waits for tenant b's lock (held as a claim holds
// it), while tenant a's job falls due and a claim in a transaction held
// open marks a idle.
func TestJobInsert_RunAtFallingDueMidInsertKeepsWakeUp(t *testing.T) {
	t.Parallel()
	f := stageFallingDue(t, 0)
	state := f.queryString(`SELECT state FROM docket_jobs WHERE tenant_id = 'a' AND state IN ('pending', 'scheduled')`)
	if state != "pending" {
		return // the schedule sweep makes it pending, and wakes its tenant
	}
	for _, j := range f.claim(f.x, 10) {
		if j.TenantID == "a" {
			return
		}
	}
	t.Fatalf("tenant a's pending job is not claimed: has_work %s (a lost wake-up until a repair sweep)",
		f.queryString(`SELECT has_work::text FROM docket_tenant_queues WHERE queue = 'q' AND tenant_id = 'a'`))
}

// TestJobInsert_RunAtFallingDueMidInsertKeepsFloor: the same race with a
// job of a higher priority than the one the claim takes. The claim also
// moved a's claim floor to the job it took (it held a's lock
// exclusively), past the new job in fetch order, and the insert, reading
// the old floor, did not clear it: the job was never claimed, even after
// the schedule sweep (whose repair woke the tenant, for claims that then
// found nothing).
func TestJobInsert_RunAtFallingDueMidInsertKeepsFloor(t *testing.T) {
	t.Parallel()
	f := stageFallingDue(t, 5)
	if _, err := f.x.JobSchedule(f.ctx, &driver.JobScheduleParams{}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		for _, j := range f.claim(f.x, 10) {
			if j.TenantID == "a" {
				return
			}
		}
	}
	t.Fatalf("tenant a's %s job (priority 5) is not claimed after the schedule sweep: claim floor at priority %d",
		f.queryString(`SELECT state FROM docket_jobs WHERE tenant_id = 'a' AND state IN ('pending', 'scheduled')`),
		f.queryInt(`SELECT coalesce(floor_priority, -1) FROM docket_tenant_queues WHERE queue = 'q' AND tenant_id = 'a'`))
}

// stageFallingDue returns a fresh fixture on which insertFallingDue staged
// its race. The insert must be waiting for b's lock before a's job falls
// due, margin after the insert's clock reading; on a loaded machine the
// insert can start later than that (it then needs a's lock, which the
// claim holds until the insert returns), so a miss is staged again on a
// fresh database with a wider margin.
func stageFallingDue(t *testing.T, prio int) *fixture {
	t.Helper()
	for _, margin := range []time.Duration{300 * time.Millisecond, time.Second, 3 * time.Second} {
		f := setup(t)
		if f.insertFallingDue(prio, margin) {
			return f
		}
		t.Logf("the insert waited for b's lock only after a's job fell due %s after its clock reading; staging again", margin)
	}
	t.Fatal("could not stage the race: the insert never waited for b's lock before a's job fell due")
	return nil
}

// insertFallingDue runs the race: the insert waits for tenant b's lock
// (held as a claim holds it), while tenant a's job (of priority prio)
// falls due and a claim in a transaction held open takes a's other job
// and marks a idle; the claim commits after the insert. It reports false,
// having run no claim, when the insert was not waiting for b's lock before
// a's job fell due.
func (f *fixture) insertFallingDue(prio int, margin time.Duration) bool {
	t := f.t
	t.Helper()
	if err := f.x.TenantLimitSet(f.ctx, &driver.TenantLimitParams{TenantID: "a", Queue: "q", MaxRunning: 2}); err != nil {
		t.Fatal(err)
	}
	f.enqueue(1, "a")

	// A claim of tenant b holds b's advisory lock exclusively.
	hold, err := f.d.Pool().Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hold.Rollback(context.WithoutCancel(f.ctx)) }()
	if _, err := hold.Exec(f.ctx, `SELECT pg_advisory_xact_lock(1684763761, docket_tenant_lock_key('q', 'b'))`); err != nil {
		t.Fatal(err)
	}

	// An insert of b's job (now) and a's (due in 300 ms): it waits for b's lock.
	var dbNow time.Time
	if err := f.d.Pool().QueryRow(f.ctx, `SELECT clock_timestamp()`).Scan(&dbNow); err != nil {
		t.Fatal(err)
	}
	due := job("a")
	due.RunAt, due.Priority = dbNow.Add(margin), prio
	inserted := make(chan error, 1)
	go func() {
		_, err := f.x.JobInsertMany(f.ctx, []*driver.JobInsertParams{job("b"), due})
		inserted <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for f.queryInt(`SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the insert did not wait for b's lock in 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if f.queryInt(`SELECT (clock_timestamp() < $1)::int`, due.RunAt) == 0 {
		if err := hold.Commit(f.ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-inserted; err != nil {
			t.Fatal(err)
		}
		return false
	}
	for f.queryInt(`SELECT (clock_timestamp() > $1)::int`, due.RunAt) == 0 {
		time.Sleep(10 * time.Millisecond)
	}

	// A claim takes a's one job, finds a short and marks it idle; it
	// commits after the insert.
	claimTx, cx := f.appTx()
	if got := f.claim(cx, 2); len(got) != 1 {
		t.Fatalf("claimed %d jobs, want a's one", len(got))
	}
	if err := hold.Commit(f.ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-inserted; err != nil {
		t.Fatal(err)
	}
	if err := claimTx.Commit(f.ctx); err != nil {
		t.Fatal(err)
	}
	return true
}
