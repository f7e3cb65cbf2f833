package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// TestPeriodicAdvance_TxIdleLimit: a leader stopped between a tick's
// compare-and-set and its commit (SIGSTOP, a pause) holds the record's row;
// with TxIdleLimit the server ends its transaction past the limit, so the
// next leader can record the tick. Before the limit, the row stayed locked
// until the stopped process resumed (chaos TestPeriodic_ExactlyOnceAcrossLeaderKill
// saw no tick for 15 s under a new leader).
func TestPeriodicAdvance_TxIdleLimit(t *testing.T) {
	t.Parallel()
	f := setup(t)
	next := time.Now().UTC().Truncate(time.Second).Add(time.Second)
	if _, err := f.x.PeriodicRegister(f.ctx, []*driver.PeriodicRegisterParams{{Name: "tick", Schedule: "* * * * * *", NextRun: next}}); err != nil {
		t.Fatal(err)
	}
	tx, err := f.x.Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.WithoutCancel(f.ctx)) })
	ok, err := tx.PeriodicAdvance(f.ctx, &driver.PeriodicAdvanceParams{
		Name: "tick", Schedule: "* * * * * *", Expect: next, Tick: next, NextRun: next.Add(time.Second),
		TxIdleLimit: 300 * time.Millisecond,
	})
	if err != nil || !ok {
		t.Fatalf("advance: %v, %v", ok, err)
	}
	// The "leader" now goes silent, its transaction open.
	locked := `SELECT 1 - count(*) FROM (SELECT name FROM docket_periodic WHERE name = 'tick' FOR UPDATE SKIP LOCKED) s`
	deadline := time.Now().Add(10 * time.Second)
	for f.queryInt(locked) == 1 {
		if time.Now().After(deadline) {
			t.Fatal("the record is still locked 10 s after its transaction went idle (limit 300ms)")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := tx.Commit(f.ctx); err == nil {
		t.Fatal("the silent leader's commit succeeded after its transaction was ended")
	}
	// The next leader records the same tick: it was never committed.
	ok, err = f.x.PeriodicAdvance(f.ctx, &driver.PeriodicAdvanceParams{
		Name: "tick", Schedule: "* * * * * *", Expect: next, Tick: next, NextRun: next.Add(time.Second),
	})
	if err != nil || !ok {
		t.Fatalf("next leader's advance: %v, %v; want recorded", ok, err)
	}
}
