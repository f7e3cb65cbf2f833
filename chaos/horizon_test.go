package chaos

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/store/pgstore"
)

// horizonConfig sizes an idle-in-transaction run: a session that pins
// vacuum's horizon while the churn goes on.
type horizonConfig struct {
	rate                 int // jobs enqueued per second
	procs, slots         int
	baseline, pin, after time.Duration
	drain                time.Duration
	ageSlack             time.Duration // the reported age against the holder's own clock
}

// TestHorizonPin_Smoke is the horizon pin at smoke size: 100 ledger jobs/s on 3
// workers × 8; after a 2 s baseline a session opens a repeatable-read
// transaction, reads the jobs table, takes a transaction id and idles for
// 6 s while the churn goes on, then commits; 2 s more of churn, then the
// drain (4 s, 10 s and 4 s until the smoke tier was cut to 3 minutes: the
// checks are the same, the health read 6 times instead of 10). While it idles, Docket's health (pgstore.Store.HorizonHolders,
// the view docket_horizon_holders) must name its pid first, idle in
// transaction, with its transaction's age (± 1 s of the database clock;
// read every second from 1 s into the pin),
// and the queue stats' oldest transaction must be at least that old; a
// VACUUM of the jobs table then must leave at least one dead row per job
// completed since the pin (the horizon held), and after the commit a VACUUM
// must remove them (fewer than a quarter left) and the holder must be gone
// from the health. The backlog drains, nothing is lost, no duplicate.
func TestHorizonPin_Smoke(t *testing.T) {
	nightlyOnly(t)
	scheduleHeavy(t) // schedule_test.go
	runHorizonPin(t, horizonConfig{rate: 100, procs: 3, slots: 8,
		baseline: 2 * time.Second, pin: 6 * time.Second, after: 2 * time.Second,
		drain: 30 * time.Second, ageSlack: time.Second})
}

func runHorizonPin(t *testing.T, c horizonConfig) {
	e := setup(t)
	ctx := context.Background()
	driver := postgres.New(e.pool)
	store := pgstore.New(driver)
	startFleet(t, c.procs, false, e.workerArgs(
		"-concurrency", strconv.Itoa(c.slots), "-lease", "2s", "-poll", "200ms",
		"-ledger-min", "1ms", "-ledger-max", "20ms"))

	// The producer: c.rate jobs/s in batches of a tenth, until stopped.
	stop := make(chan struct{})
	var (
		mu          sync.Mutex
		acked       []int64
		enqueueErrs []error
		producer    sync.WaitGroup
	)
	producer.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			ids, err := e.enqueue(ctx, ledgerJobs(max(c.rate/10, 1), 10, "tenant-", 25, nil))
			mu.Lock()
			acked = append(acked, ids...)
			if err != nil {
				enqueueErrs = append(enqueueErrs, fmt.Errorf("enqueue batch %d: %w", i, err))
			}
			mu.Unlock()
		}
	})
	stopProducer := sync.OnceFunc(func() { close(stop); producer.Wait() })
	defer stopProducer()

	time.Sleep(c.baseline) // the baseline churn
	t0 := e.dbNow()

	// The holder: a session idle in a repeatable-read transaction with a
	// transaction id.
	holder, err := pgx.Connect(ctx, e.connString+" application_name=chaos-holder")
	if err != nil {
		t.Fatalf("holder: %v", err)
	}
	defer holder.Close(ctx)
	holderTx, err := holder.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		t.Fatalf("holder: %v", err)
	}
	var holderPID int
	var pinnedAt time.Time
	if err := holderTx.QueryRow(ctx, `SELECT pg_backend_pid(), now(), txid_current() FROM (SELECT 1 FROM docket_jobs LIMIT 1) j`).
		Scan(&holderPID, &pinnedAt, new(int64)); err != nil {
		t.Fatalf("holder: %v", err)
	}
	completedAtPin := e.count(`SELECT count(*) FROM effects`)
	t.Logf("pid %d idles in transaction from %s (%d jobs completed so far)", holderPID, pinnedAt.Format("15:04:05.000"), completedAtPin)

	// Health names the holder first from a second into the pin on (the
	// producer's transactions may be older before); read every second.
	var named, checks int
	firstNamed := time.Duration(-1)
	for end := time.Now().Add(c.pin); time.Now().Before(end); {
		time.Sleep(time.Second)
		checks++
		hs, err := store.HorizonHolders(ctx, 3)
		if err != nil {
			t.Fatalf("health: %v", err)
		}
		now := e.dbNow()
		age := now.Sub(pinnedAt)
		if len(hs) == 0 || hs[0].PID != holderPID {
			t.Errorf("%.1fs into the pin: horizon holders %+v, want pid %d first", age.Seconds(), hs, holderPID)
			continue
		}
		h := hs[0]
		if h.State != "idle in transaction" || h.Application != "chaos-holder" ||
			h.TransactionAge < age-c.ageSlack || h.TransactionAge > age+c.ageSlack {
			t.Errorf("%.1fs into the pin: holder %+v, want idle in transaction, chaos-holder, age %s ± %s",
				age.Seconds(), h, age.Round(time.Millisecond), c.ageSlack)
		}
		st, err := e.client.Stats(ctx, queue.DefaultQueue)
		if err != nil {
			t.Fatal(err)
		}
		if st.OldestXactAge < h.TransactionAge-c.ageSlack {
			t.Errorf("queue stats: oldest transaction %s, want at least the holder's %s", st.OldestXactAge, h.TransactionAge)
		}
		named++
		if firstNamed < 0 {
			firstNamed = age
		}
	}
	completedPinned := e.count(`SELECT count(*) FROM effects`) - completedAtPin
	vacPinned, vacPinnedTook := vacuumJobs(t, e)
	lastHealth, err := store.HorizonHolders(ctx, 1)
	if err != nil || len(lastHealth) == 0 {
		t.Fatalf("health at the end of the pin: %v, %v", lastHealth, err)
	}
	if err := holderTx.Commit(ctx); err != nil {
		t.Fatalf("holder commit: %v", err)
	}
	t1 := e.dbNow()
	hs, err := store.HorizonHolders(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		if h.PID == holderPID {
			t.Errorf("after its commit the holder is still named: %+v", h)
		}
	}

	time.Sleep(c.after) // churn after the holder ended
	stopProducer()
	t2 := e.dbNow()
	mu.Lock()
	all := append([]int64(nil), acked...)
	mu.Unlock()
	drained, seen := pollUntil(c.drain, func() (bool, string) {
		s := e.stats()
		return s[queue.StatePending]+s[queue.StateRunning]+s[queue.StateScheduled] == 0 &&
			s[queue.StateCompleted] >= len(all), formatStates(s)
	})
	if !drained {
		t.Errorf("not drained %s after the producer stopped: %s", c.drain, seen)
	}
	vacAfter, vacAfterTook := vacuumJobs(t, e)

	if completedPinned == 0 {
		t.Errorf("no job completed during the pin")
	}
	if vacPinned < int64(completedPinned) {
		t.Errorf("VACUUM during the pin left %d dead rows, want at least one per job completed since the pin (%d): the horizon did not hold",
			vacPinned, completedPinned)
	}
	if vacAfter*4 > vacPinned {
		t.Errorf("VACUUM after the holder ended left %d dead rows (%d during the pin): the horizon did not move", vacAfter, vacPinned)
	}

	v := e.checkTotalQueue(all, nil)
	t.Logf("total-queue: %s", v)
	for _, p := range v.problems() {
		t.Error(p)
	}
	for _, err := range enqueueErrs {
		t.Errorf("%v (no fault in the database)", err)
	}

	// Figures: completions/s and enqueue→start per phase (database clock).
	type phase struct {
		name     string
		from, to time.Time
	}
	for _, p := range []phase{{"baseline", t0.Add(-c.baseline), t0}, {"pinned", t0, t1}, {"after", t1, t2}} {
		var done int
		var p50, p99 float64
		err := e.pool.QueryRow(ctx, `
SELECT (SELECT count(*) FROM effects WHERE done_at >= $1 AND done_at < $2),
       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY w), 0), coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY w), 0)
FROM (SELECT extract(epoch FROM j.started_at - q.enqueued_at) * 1000 AS w
      FROM enqueues q JOIN docket_jobs j ON j.id = q.job_id
      WHERE q.enqueued_at >= $1 AND q.enqueued_at < $2) s`, p.from, p.to).Scan(&done, &p50, &p99)
		if err != nil {
			t.Fatalf("figures: %v", err)
		}
		t.Logf("%-8s %5.1fs: %4.0f completions/s, enqueue→start p50 %.0f ms, p99 %.0f ms",
			p.name, p.to.Sub(p.from).Seconds(), float64(done)/p.to.Sub(p.from).Seconds(), p50, p99)
	}
	t.Logf("health named pid %d in %d of %d reads, first %.2fs into the pin; at its end: age %s, %d xids, state %q",
		holderPID, named, checks, firstNamed.Seconds(), lastHealth[0].TransactionAge.Round(time.Millisecond),
		lastHealth[0].XIDAge, lastHealth[0].State)
	t.Logf("VACUUM docket_jobs: %d dead rows left during the pin (%d jobs completed since it; %s), %d after it ended (%s)",
		vacPinned, completedPinned, vacPinnedTook.Round(time.Millisecond), vacAfter, vacAfterTook.Round(time.Millisecond))
}

// vacuumJobs vacuums the jobs table and returns the dead rows it had to
// leave (pg_stat_user_tables.n_dead_tup right after it: the row versions
// still visible to some transaction) and how long it took.
func vacuumJobs(t *testing.T, e *env) (int64, time.Duration) {
	t.Helper()
	start := time.Now()
	if _, err := e.pool.Exec(context.Background(), `VACUUM docket_jobs`); err != nil {
		t.Fatalf("vacuum: %v", err)
	}
	took := time.Since(start)
	var dead int64
	if err := e.pool.QueryRow(context.Background(),
		`SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = 'docket_jobs'::regclass`).Scan(&dead); err != nil {
		t.Fatalf("dead rows: %v", err)
	}
	return dead, took
}
