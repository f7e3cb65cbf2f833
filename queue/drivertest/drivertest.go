// Package drivertest is the conformance suite every engine driver must
// pass: [Run] and [RunConfig] check a [driver.Driver] against what the
// engine (package queue) relies on. (The document store has its own suite,
// package storetest.)
//
// A driver package runs it from one test, with a constructor that returns a
// fresh, migrated, empty store for each subtest and registers its own
// cleanup, the way testing/slogtest checks a slog.Handler:
//
//	func TestConformance(t *testing.T) {
//		drivertest.Run(t, func(t *testing.T) driver.Driver {
//			return newTestDriver(t)
//		})
//	}
//
// [RunConfig] adds optional hooks for what the suite cannot do through the
// interface: open a native transaction for Driver.UnwrapTx, call the
// store's SQL enqueue function.
//
// Subtests are grouped by Executor method (JobInsertMany, JobClaim, ...) and
// run in parallel, each against its own store. What a driver cannot do, by
// its [driver.Capabilities], is skipped with the reason. The store's clock is
// authoritative and cannot be injected, so the tests that need time to pass
// (lease expiry, run_at) use short real durations and poll with deadlines;
// nothing is synchronised with sleeps.
package drivertest

import (
	"testing"

	"github.com/docketq/docket/queue/driver"
)

// Config configures a run of the suite beyond the driver constructor.
type Config struct {
	// NewDriver returns a fresh, migrated, empty store. It registers its
	// own cleanup (t.Cleanup) and fails t when it cannot.
	NewDriver func(t *testing.T) driver.Driver

	// BeginNative, when set, starts a transaction of the driver's native
	// type (the type Driver.UnwrapTx accepts: pgx.Tx, *sql.Tx) on d's
	// database. Without it the tests of Driver.UnwrapTx with a real
	// transaction are skipped; transactional enqueue is still tested
	// through Executor.Begin.
	BeginNative func(t *testing.T, d driver.Driver) NativeTx

	// EnqueueSQL, when set, enqueues the job p describes through the
	// store's SQL function (Capabilities.SQLEnqueue) and returns its id.
	// The suite cannot call SQL by itself: without the hook the test of
	// the SQL function is skipped.
	EnqueueSQL func(t *testing.T, d driver.Driver, p *driver.JobInsertParams) int64
}

// NativeTx is a transaction of the driver's own type, for Driver.UnwrapTx.
type NativeTx struct {
	Tx       any
	Commit   func() error
	Rollback func() error
}

// Run runs the suite against the stores newDriver returns.
func Run(t *testing.T, newDriver func(t *testing.T) driver.Driver) {
	RunConfig(t, Config{NewDriver: newDriver})
}

// RunConfig runs the suite as configured.
func RunConfig(t *testing.T, cfg Config) {
	t.Helper()
	if cfg.NewDriver == nil {
		t.Fatal("drivertest: Config.NewDriver is nil")
	}
	s := &suite{cfg: cfg}
	groups := []struct {
		name string
		fn   func(*testing.T)
	}{
		{"Driver", s.testDriver},
		{"JobInsertMany", s.testJobInsertMany},
		{"SQLEnqueue", s.testSQLEnqueue},
		{"JobGet", s.testJobGet},
		{"JobList", s.testJobList},
		{"JobClaim", s.testJobClaim},
		{"JobClaimLimits", s.testJobClaimLimits},
		{"JobClaimOrderAfterChurn", s.testJobClaimOrderAfterChurn},
		{"JobClaimFairness", s.testJobClaimFairness},
		{"JobClaimCost", s.testJobClaimCost},
		{"JobClaimEmptiedTenant", s.testJobClaimEmptiedTenant},
		{"JobClaimConcurrent", s.testJobClaimConcurrent},
		{"JobHeartbeat", s.testJobHeartbeat},
		{"JobProgress", s.testJobProgress},
		{"JobProgressPartial", s.testJobProgressPartial},
		{"JobFinish", s.testJobFinish},
		{"Fencing", s.testFencing},
		{"JobRescue", s.testJobRescue},
		{"JobCancel", s.testJobCancel},
		{"JobRetry", s.testJobRetry},
		{"JobPosition", s.testJobPosition},
		{"JobSchedule", s.testJobSchedule},
		{"JobDeleteFinished", s.testJobDeleteFinished},
		{"Leader", s.testLeader},
		{"Periodic", s.testPeriodic},
		{"QueueStats", s.testQueueStats},
		{"Pause", s.testPause},
		{"Notifier", s.testNotifier},
		{"Workflow", s.testWorkflow},
		{"Differential", s.testDifferential},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.fn(t)
		})
	}
}

type suite struct {
	cfg Config
}
