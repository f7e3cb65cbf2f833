package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// claimCallsSQL counts the claim statements (postgres/job_claim.go's
// claimSQL, one per claim) that pg_stat_statements saw since its reset.
const claimCallsSQL = `SELECT coalesce(sum(calls), 0)::int FROM pg_stat_statements
WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND query LIKE '%WITH tenants AS%' AND query LIKE '%UPDATE docket_jobs j SET%'`

// TestThunderingHerd_Smoke: 8 idle worker processes × 16 slots
// (poll 30 s, so only notifications wake them); one job is inserted. It
// runs exactly once, and the server sees at most 8 claim statements (one
// per process: pg_stat_statements) from the insert until that job (a 3 s
// ledger job) ends. Then 1,000 jobs inserted in one transaction: a LISTEN
// session like each worker's receives at most one notification for them,
// and each runs exactly once (total-queue).
func TestThunderingHerd_Smoke(t *testing.T) {
	nightlyOnly(t)
	scheduleHeavy(t) // schedule_test.go
	const procs, slots = 8, 16
	if !testing.Short() && cluster.External() {
		t.Skip("needs pg_stat_statements preloaded, as the package's own cluster has it; not with " + pgtest.EnvDatabaseURL)
	}
	e := setup(t) // the package's cluster preloads pg_stat_statements
	ctx := context.Background()
	if _, err := e.pool.Exec(ctx, `CREATE EXTENSION pg_stat_statements`); err != nil {
		t.Fatalf("pg_stat_statements: %v", err)
	}
	startFleet(t, procs, false, e.workerArgs("-concurrency", strconv.Itoa(slots), "-poll", "30s", "-no-maintenance"))

	// A session that listens as the workers do (driver.TopicInsert).
	listener, err := pgx.Connect(ctx, e.connString)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close(ctx)
	if _, err := listener.Exec(ctx, `LISTEN `+driver.TopicInsert); err != nil {
		t.Fatal(err)
	}
	// Every worker past its first claim (one per process: the claim gate)
	// and idle.
	waitFor(t, 10*time.Second, "every worker's first claim", func() (bool, string) {
		n := e.count(claimCallsSQL)
		return n >= procs, fmt.Sprintf("%d claim statements", n)
	})

	// One job: a ledger job of 3 s, so that no claim that follows its end
	// counts.
	if _, err := e.pool.Exec(ctx, `SELECT pg_stat_statements_reset()`); err != nil {
		t.Fatal(err)
	}
	one := e.mustEnqueue([]*queue.EnqueueParams{{Kind: kindLedger, TenantID: "herd", Args: map[string]int{"sleep_ms": 3000}}})
	inserted := time.Now()
	waitFor(t, 10*time.Second, "the job to start", func() (bool, string) {
		n := e.count(`SELECT count(*) FROM executions`)
		return n > 0, strconv.Itoa(n) + " executions"
	})
	time.Sleep(max(0, 200*time.Millisecond-time.Since(inserted))) // count the claims 200 ms after the insert
	claims := e.count(claimCallsSQL)
	started := time.Since(inserted)
	running := e.stats()[queue.StateRunning]
	if running != 1 {
		t.Fatalf("when the claims were read the job was no longer running (%d running): the count may include claims after its end", running)
	}
	if claims > procs || claims < 1 {
		t.Errorf("%d claim statements after one insert, want 1 to %d (one per process)", claims, procs)
	}
	waitFor(t, 10*time.Second, "the job to complete", func() (bool, string) {
		s := e.stats()
		return s[queue.StateCompleted] == 1, formatStates(s)
	})
	claimsAfter := e.count(claimCallsSQL)
	if n := e.count(`SELECT count(*) FROM executions`); n != 1 {
		t.Errorf("%d executions of the one job, want exactly 1", n)
	}
	t.Logf("one insert: %d claim statements within %s (%d processes), %d once it completed",
		claims, started.Round(time.Millisecond), procs, claimsAfter)

	// Drain what the listener got so far (the one insert), then 1,000
	// jobs in one transaction.
	before := drainNotifications(t, listener)
	ids := e.mustEnqueue(ledgerJobs(1000, 10, "herd-", 25, nil))
	acked := append(slices.Clone(one), ids...)
	waitFor(t, 60*time.Second, "the 1,000 jobs", func() (bool, string) {
		s := e.stats()
		return s[queue.StateCompleted] == len(acked), formatStates(s)
	})
	got := drainNotifications(t, listener)
	if got > 1 {
		t.Errorf("%d notifications for 1,000 jobs inserted in one transaction, want at most 1", got)
	}
	t.Logf("1,000 jobs in one transaction: %d notification(s) to a listener (%d for the single insert); %d claim statements in all",
		got, before, e.count(claimCallsSQL))
	v := e.checkTotalQueue(acked, nil)
	t.Logf("total-queue: %s", v)
	for _, p := range v.problems() {
		t.Error(p)
	}
}

// drainNotifications counts the notifications the connection has received,
// waiting 300 ms for more after the last.
func drainNotifications(t *testing.T, conn *pgx.Conn) int {
	t.Helper()
	n := 0
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		_, err := conn.WaitForNotification(ctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			return n
		}
		if err != nil {
			t.Fatalf("wait for notification: %v", err)
		}
		n++
	}
}
