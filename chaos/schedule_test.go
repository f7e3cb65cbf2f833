package chaos

import (
	"flag"
	"strconv"
	"testing"
	"time"
)

// The smoke tier's schedule. Most of a scenario's time is waiting (leases
// running out, partitions and pauses lasting, sleeping jobs): the whole
// tier uses well under a core of the 2-core box. So scenarios overlap where
// they cannot disturb each other's bounds, in three classes:
//
//   - alone: the scenarios whose bounds are tight latencies or rates, or
//     that load the box (18 LISTEN killed: a start within poll + 300 ms;
//     31 priority: p95 within poll + 200 ms; 14 SIGSTOP's late writes; 30
//     tenant starvation's p95 and rate share; 13's kill storm; 10's
//     graceful shutdowns, an exit within grace + 1 s). They are ordinary
//     sequential tests, so go test runs them first, with nothing beside.
//   - heavy: the other fault scenarios (scheduleHeavy). They run after
//     the sequential ones, one at a time (go test releases the parallel
//     tests together; whichever takes the slot first runs first).
//   - light: scenarios that mostly sleep (scheduleLight): pause/resume,
//     the periodic leader kill, 19's start into a full budget, 21–22's two
//     clock skews (on clusters of their own, 36 sleeping jobs each) and
//     the claim of a held tenant row. One of them runs beside the heavy
//     scenario of the moment: two at once slowed the heavy ones (their
//     chain took 143 s instead of 132 s, 2026-11-25), and two heavy at
//     once broke lease bounds (docs/reliability.md). 20's leader failover
//     was light in two runs and failed in the second (an unkilled worker's
//     heartbeats past its 2 s lease, load 14): it is heavy.
//
// The shared cluster's scenarios do not see each other: each has its own
// database, and what they read per server is filtered by database
// (pg_stat_statements by dbid for 32, pg_stat_activity by datname for 23's
// horizon holders; since PostgreSQL 14 a VACUUM's horizon ignores other
// databases' snapshots).
var (
	heavySlot  = make(chan struct{}, 1)
	lightSlots = make(chan struct{}, 1)
)

// scheduleHeavy makes t a parallel test that runs while no other heavy
// scenario does (beside light ones). Call it first.
func scheduleHeavy(t *testing.T) { schedule(t, heavySlot) }

// scheduleLight makes t a parallel test that runs while no other light
// scenario does, beside the heavy one of the moment. Call it first.
func scheduleLight(t *testing.T) { schedule(t, lightSlots) }

func schedule(t *testing.T, slots chan struct{}) {
	t.Helper()
	t.Parallel()
	asked := time.Now()
	slots <- struct{}{}
	got := time.Now()
	t.Cleanup(func() {
		<-slots
		t.Logf("schedule: ran %.1fs after %.1fs waiting for its slot (%s)",
			time.Since(got).Seconds(), got.Sub(asked).Seconds(), got.Format("15:04:05.0"))
	})
}

// minParallel is the least -parallel this package runs with: every heavy
// and light scenario must be started at once, so that its slot (not go
// test's) decides when it runs; a lower -parallel (go test's default is
// GOMAXPROCS, 2 here; scripts/test.sh gives every package 4) would hold the
// light scenarios back behind the heavy ones waiting for their turn.
const minParallel = 64

// setParallelDefault raises -test.parallel to minParallel. Call it after
// flag.Parse, before m.Run.
func setParallelDefault() error {
	if f := flag.Lookup("test.parallel"); f != nil {
		if n, err := strconv.Atoi(f.Value.String()); err == nil && n >= minParallel {
			return nil
		}
	}
	return flag.Set("test.parallel", strconv.Itoa(minParallel))
}

// nightlyOnly skips t outside the nightly tier. make test keeps one
// scenario of each kind of fault (a kill storm, a poison pill, a killed
// listener, a SIGSTOPped worker, graceful shutdowns, a dropped network, a
// database crash, a refused asynchronous commit, a periodic task across a
// leader kill), small enough to finish within a couple of minutes beside
// the other packages. The nightly tier adds the rest: the connection
// budget, the leader failover, tenant starvation, priority inversion, the
// thundering herd, the horizon pin, the partition mid-transaction and by
// reset, the server restart, pause and resume, the held tenant row and the
// clock skews. Most of those wait on leases, polls or skewed clocks, or
// bound a latency that a loaded two-core machine cannot keep.
func nightlyOnly(t *testing.T) {
	t.Helper()
	if !nightlyTier {
		t.Skip("nightly tier: make test-nightly runs it (go test -tags chaos ./chaos/)")
	}
}
