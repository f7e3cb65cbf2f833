package sqlite_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// tenantWatch counts, per tenant, the jobs the test sees running, and
// fails the test when one tenant runs more than one.
type tenantWatch struct {
	t       *testing.T
	mu      sync.Mutex
	running map[string]int
	runs    map[int64]int
	done    atomic.Int64
}

func newTenantWatch(t *testing.T) *tenantWatch {
	return &tenantWatch{t: t, running: map[string]int{}, runs: map[int64]int{}}
}

func (w *tenantWatch) start(jobs ...*queue.Job) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, j := range jobs {
		w.runs[j.ID]++
		if w.running[j.TenantID]++; w.running[j.TenantID] > 1 {
			w.t.Errorf("tenant %s runs %d jobs, over its limit of 1", j.TenantID, w.running[j.TenantID])
		}
	}
}

// stop must come before the store frees the slot, so that the test's
// window lies inside the store's.
func (w *tenantWatch) stop(jobs ...*queue.Job) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, j := range jobs {
		w.running[j.TenantID]--
	}
	w.done.Add(int64(len(jobs)))
}

func (w *tenantWatch) check(total int) {
	w.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.runs) != total {
		w.t.Fatalf("%d distinct jobs ran, want %d", len(w.runs), total)
	}
	for id, n := range w.runs {
		if n != 1 {
			w.t.Fatalf("job %d ran %d times", id, n)
		}
	}
}

func enqueueTenants(t *testing.T, x driver.Executor, queueName string, tenants, perTenant int) int {
	t.Helper()
	ps := make([]*driver.JobInsertParams, 0, tenants*perTenant)
	for i := range tenants * perTenant {
		ps = append(ps, &driver.JobInsertParams{Queue: queueName, Kind: "k", TenantID: fmt.Sprintf("t%d", i%tenants), MaxAttempts: 3})
	}
	if _, err := x.JobInsertMany(context.Background(), ps); err != nil {
		t.Fatal(err)
	}
	return len(ps)
}

// Many goroutines claiming, heartbeating and finishing at once never run
// two jobs of a tenant whose limit is 1, never claim a job twice, never
// see SQLITE_BUSY, and leave every slot count at zero.
func TestJobClaim_ConcurrentLimitOne(t *testing.T) {
	t.Parallel()
	d := setup(t)
	total := enqueueTenants(t, d.Executor(), "q", 8, 15)
	w := newTenantWatch(t)
	deadline := time.Now().Add(60 * time.Second)
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			for w.done.Load() < int64(total) && time.Now().Before(deadline) && !t.Failed() {
				claimRun(t, d.Executor(), w, fmt.Sprint(i), 1+i%4)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	w.check(total)
	var busy int
	if err := d.DB().QueryRow(`SELECT count(*) FROM docket_tenant_queues WHERE running <> 0`).Scan(&busy); err != nil || busy != 0 {
		t.Fatalf("%d slot rows with running <> 0 after all jobs finished (%v)", busy, err)
	}
}

// claimRun claims up to max jobs, heartbeats and completes them.
func claimRun(t *testing.T, x driver.Executor, w *tenantWatch, worker string, max int) {
	ctx := context.Background()
	jobs, _, err := x.JobClaim(ctx, &driver.JobClaimParams{Queue: "q", WorkerID: worker, Max: max, LeaseDuration: time.Minute})
	if err != nil || len(jobs) == 0 {
		if err != nil {
			t.Errorf("JobClaim: %v", err)
		}
		time.Sleep(200 * time.Microsecond) // poll
		return
	}
	w.start(jobs...)
	leases := make([]queue.Lease, len(jobs))
	ps := make([]*driver.JobFinishParams, len(jobs))
	for i, j := range jobs {
		leases[i] = j.Lease()
		ps[i] = &driver.JobFinishParams{Lease: j.Lease(), Outcome: queue.OutcomeCompleted}
	}
	if held, err := x.JobHeartbeat(ctx, &driver.JobHeartbeatParams{Leases: leases, LeaseDuration: time.Minute}); err != nil || len(held) != len(jobs) {
		t.Errorf("JobHeartbeat: %d of %d held, %v", len(held), len(jobs), err)
	}
	w.stop(jobs...)
	errs, err := x.JobFinish(ctx, ps)
	if err != nil {
		t.Errorf("JobFinish: %v", err)
		return
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("finish job %d: %v", jobs[i].ID, err)
		}
	}
}

// The engine on SQLite: two workers with many goroutines each run every
// job once and never two of one tenant at a time.
func TestWorker_TenantLimitOne(t *testing.T) {
	t.Parallel()
	d := setup(t)
	c := queue.NewClient(d, queue.ClientConfig{})
	w := newTenantWatch(t)
	h := queue.HandlerFunc(func(_ context.Context, task *queue.Task) error {
		w.start(task.Job)
		time.Sleep(time.Millisecond)
		w.stop(task.Job)
		return nil
	})
	startWorkers(t, c, 2, queue.WorkerConfig{
		Queues:        map[string]queue.QueueConfig{"q": {MaxWorkers: 16}},
		Handlers:      map[string]queue.HandlerConfig{"k": {Handler: h}},
		LeaseDuration: 5 * time.Second,
		PollInterval:  20 * time.Millisecond,
	})
	total := enqueueTenants(t, d.Executor(), "q", 6, 30)
	deadline := time.Now().Add(60 * time.Second)
	for w.done.Load() < int64(total) {
		if time.Now().After(deadline) || t.Failed() {
			t.Fatalf("%d of %d jobs done", w.done.Load(), total)
		}
		time.Sleep(10 * time.Millisecond)
	}
	w.check(total)
}

// startWorkers runs n workers until the test ends.
func startWorkers(t *testing.T, c *queue.Client, n int, cfg queue.WorkerConfig) {
	t.Helper()
	for range n {
		w, err := queue.NewWorker(c, cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- w.Run(ctx) }()
		t.Cleanup(func() {
			cancel()
			if err := <-errc; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
}
