package postgres_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// TestClaimWaitStress runs, on a private cluster with log_lock_waits on and
// a 10 ms deadlock_timeout, what the churn soak (chaos/soak_test.go) runs on
// one queue: claims, the worker's batched finishes, finishes in a caller's
// transaction, inserts, the cleaner, the scheduler and its repair, and the
// rescuer, on many tenants with small limits. The claim is designed never
// to wait for a lock (tenant_lock.go), so the server log must show no wait
// of a claim's statements, and no claim may fail. Set CLAIM_STRESS to a
// duration to run it (e.g. 30s); CLAIM_STRESS_LOG copies the server log.
func TestClaimWaitStress(t *testing.T) {
	t.Parallel()
	dur, err := time.ParseDuration(os.Getenv("CLAIM_STRESS"))
	if err != nil || dur <= 0 {
		t.Skip("CLAIM_STRESS names no duration")
	}
	c, err := pgtest.Start(pgtest.Options{
		Template: postgres.MigrateURL,
		Settings: map[string]string{
			"log_lock_waits": "on", "deadlock_timeout": "'10ms'", "log_min_messages": "log",
			"log_line_prefix": "'%m [%p] '",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(filepath.Dir(c.DataDir()), "postgres.log")
	t.Cleanup(func() {
		if dst := os.Getenv("CLAIM_STRESS_LOG"); dst != "" {
			if b, err := os.ReadFile(logFile); err == nil {
				_ = os.WriteFile(dst, b, 0o644)
			}
		}
		_ = c.Stop()
	})
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, c.NewDatabase(t)+" pool_max_conns=40")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	d := postgres.New(pool)
	x := d.Executor()
	const tenants = 60
	for i := range tenants {
		if err := x.TenantLimitSet(ctx, &driver.TenantLimitParams{TenantID: fmt.Sprint("t", i), Queue: "q", MaxRunning: 3}); err != nil {
			t.Fatal(err)
		}
	}
	run, cancel := context.WithTimeout(ctx, dur)
	defer cancel()
	var (
		wg                          sync.WaitGroup
		claims, claimErrs, finished atomic.Int64
		mu                          sync.Mutex
		errs                        []string
	)
	fail := func(what string, err error) {
		if run.Err() != nil {
			return
		}
		mu.Lock()
		if len(errs) < 20 {
			errs = append(errs, what+": "+err.Error())
		}
		mu.Unlock()
	}
	leases := make(chan driver.Lease, 10000)
	loop := func(n int, step func()) {
		for range n {
			wg.Go(func() {
				for run.Err() == nil {
					step()
				}
			})
		}
	}
	loop(2, func() { // inserts
		var ps []*driver.JobInsertParams
		for range 30 {
			ps = append(ps, job(fmt.Sprint("t", rand.IntN(tenants))))
		}
		if _, err := x.JobInsertMany(run, ps); err != nil {
			fail("insert", err)
		}
		time.Sleep(5 * time.Millisecond)
	})
	loop(6, func() { // claims
		jobs, _, err := x.JobClaim(run, &driver.JobClaimParams{Queue: "q", WorkerID: "w", Max: 10, LeaseDuration: 2 * time.Second})
		claims.Add(1)
		if err != nil {
			if run.Err() == nil {
				claimErrs.Add(1)
			}
			fail("claim", err)
			return
		}
		for _, j := range jobs {
			if rand.IntN(100) == 0 {
				continue // left to the rescuer
			}
			leases <- j.Lease()
		}
		if len(jobs) == 0 {
			time.Sleep(2 * time.Millisecond)
		}
	})
	outcome := func() (driver.Outcome, time.Duration) {
		switch rand.IntN(20) {
		case 0:
			return driver.OutcomeRetry, 0
		case 1:
			return driver.OutcomeRetry, 20 * time.Millisecond
		case 2:
			return driver.OutcomeReleased, 0
		default:
			return driver.OutcomeCompleted, 0
		}
	}
	loop(3, func() { // the worker's batched finishes
		var ps []*driver.JobFinishParams
		timer := time.After(5 * time.Millisecond)
	collect:
		for len(ps) < 32 {
			select {
			case l := <-leases:
				o, in := outcome()
				ps = append(ps, &driver.JobFinishParams{Lease: l, Outcome: o, RetryIn: in, WorkerID: "w"})
			case <-timer:
				break collect
			case <-run.Done():
				return
			}
		}
		if len(ps) == 0 {
			return
		}
		if _, err := x.JobFinish(run, ps); err != nil {
			fail("finish", err)
		}
		finished.Add(int64(len(ps)))
	})
	loop(3, func() { // finishes in a caller's transaction (CompleteTx)
		var l driver.Lease
		select {
		case l = <-leases:
		case <-run.Done():
			return
		}
		err := func() error {
			tx, err := pool.Begin(run)
			if err != nil {
				return err
			}
			defer func() { _ = tx.Rollback(context.WithoutCancel(run)) }()
			tx2, err := d.UnwrapTx(tx)
			if err != nil {
				return err
			}
			o, in := outcome()
			if _, err := tx2.JobFinish(run, []*driver.JobFinishParams{{Lease: l, Outcome: o, RetryIn: in, WorkerID: "w", TxIdleLimit: time.Minute}}); err != nil {
				return err
			}
			return tx.Commit(run)
		}()
		if err != nil {
			fail("finish tx", err)
		}
		finished.Add(1)
	})
	sweep := func(what string, f func() error) func() {
		return func() {
			if err := f(); err != nil {
				fail(what, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	loop(1, sweep("clean", func() error {
		_, err := x.JobDeleteFinished(run, &driver.JobDeleteFinishedParams{CompletedAge: 100 * time.Millisecond, FailedAge: time.Millisecond, CancelledAge: time.Millisecond, Limit: 500})
		return err
	}))
	loop(1, sweep("schedule", func() error {
		_, err := x.JobSchedule(run, &driver.JobScheduleParams{Limit: 500})
		return err
	}))
	loop(1, sweep("rescue", func() error {
		_, err := x.JobRescue(run, &driver.JobRescueParams{Limit: 500})
		return err
	}))
	wg.Wait()
	t.Logf("%d claims (%d failed), %d finished", claims.Load(), claimErrs.Load(), finished.Load())
	for _, e := range errs {
		t.Errorf("%s", e)
	}
	f, err := os.Open(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	waits := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "still waiting") || strings.Contains(line, "deadlock") {
			waits++
		}
	}
	t.Logf("%d lock waits or deadlocks logged (see CLAIM_STRESS_LOG)", waits)
}
