package driver

import (
	"context"
	"time"
)

// PeriodicExecutor keeps the store's record of periodic tasks: one row per
// name with its schedule, the tick due next and the last tick that ran.
// Part of Executor. Times are kept to the microsecond.
type PeriodicExecutor interface {
	// PeriodicRegister makes sure each named task has a record: a missing
	// one is inserted with the given Schedule and NextRun; one whose
	// Schedule differs gets the given Schedule and NextRun (its last tick,
	// run and missed counts are kept); one whose Schedule is the same is
	// left as it is. It returns the records as stored, in params' order.
	PeriodicRegister(ctx context.Context, params []*PeriodicRegisterParams) ([]*PeriodicRecord, error)

	// PeriodicAdvance records that the tick Tick of task Name ran:
	// LastTick = Tick, NextRun = params.NextRun, LastRunAt = the store's
	// now, Runs+1, Missed+params.Missed; but only while the record still
	// has NextRun = Expect and the same Schedule (compare-and-set). It
	// returns whether it changed the record; false with no error when the
	// record is missing or another process advanced it first. Under
	// concurrent calls for the same Expect exactly one returns true, also
	// when each runs in a transaction that goes on to other writes: a
	// second caller waits for the first's transaction and then sees the new
	// record (PostgreSQL) or runs after it (SQLite's single writer).
	PeriodicAdvance(ctx context.Context, params *PeriodicAdvanceParams) (bool, error)

	// PeriodicList returns every record, by name.
	PeriodicList(ctx context.Context) ([]*PeriodicRecord, error)
}

// PeriodicRecord is the store's record of one periodic task.
type PeriodicRecord struct {
	Name     string
	Schedule string
	// NextRun is the tick due next.
	NextRun time.Time
	// LastTick is the last tick that ran; zero when none has.
	LastTick time.Time
	// LastRunAt is when LastTick ran, by the store's clock; zero when none
	// has.
	LastRunAt time.Time
	// Runs counts the ticks that ran; Missed the ticks passed over because
	// a later one was already due (docs/periodic.md).
	Runs   int64
	Missed int64
}

// PeriodicRegisterParams names a task and the record it starts with.
type PeriodicRegisterParams struct {
	Name     string
	Schedule string
	NextRun  time.Time
}

// PeriodicAdvanceParams records the run of one tick.
type PeriodicAdvanceParams struct {
	Name     string
	Schedule string
	// Expect is the NextRun the caller read: the compare-and-set's
	// condition.
	Expect time.Time
	// Tick is the tick that runs (Expect, or a later one when ticks were
	// missed) and NextRun the tick due after it.
	Tick    time.Time
	NextRun time.Time
	// Missed is how many ticks from Expect on were passed over.
	Missed int
	// TxIdleLimit, when positive and the advance runs in a transaction,
	// bounds how long that transaction may then sit idle: a store shared by
	// processes ends it past the limit (PostgreSQL: the transaction's
	// idle_in_transaction_session_timeout), releasing the record, so that
	// a leader stopped between the advance and its commit (SIGSTOP, a
	// pause, a partition) cannot hold the record, and every later tick,
	// from the next leader. The runner passes the leader TTL.
	TxIdleLimit time.Duration
}
