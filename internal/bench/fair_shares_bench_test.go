package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// BenchmarkFairShares runs, on each driver, a worker of 8 slots (tenant limits 64, out of
// the way) over two tenants with deep backlogs,
// "big" of cost-500 jobs and "small" of cost-1 jobs, whose handlers sleep
// 20 µs per unit of cost, for three seconds per iteration (claims 200 µs
// apart at least), and reports each
// tenant's share of the cost processed: by cost with equal weights, by
// cost with weights 1:4 (small 4), and by count (every job declared cost
// 1, the handlers sleeping as before): the order of before.
//
//	go test -run '^$' -bench FairShares -benchtime 3x ./internal/bench
func BenchmarkFairShares(b *testing.B) {
	for _, kind := range driverKinds {
		for _, c := range []struct {
			name        string
			byCost      bool
			smallWeight int
		}{{"cost", true, 1}, {"cost-weights-1-4", true, 4}, {"count", false, 1}} {
			b.Run(kind+"/"+c.name, func(b *testing.B) {
				var big, small float64
				for range b.N {
					bg, sm := fairRun(b, kind, c.byCost, c.smallWeight, 3*time.Second)
					big, small = big+bg, small+sm
				}
				b.ReportMetric(100*big/(big+small), "%big")
				b.ReportMetric(100*small/(big+small), "%small")
			})
		}
	}
}

// fairRun fills the backlogs, runs the worker for d and returns the cost
// each tenant completed in that time.
func fairRun(b *testing.B, kind string, byCost bool, smallWeight int, d time.Duration) (big, small float64) {
	b.Helper()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	drv := benchEnv(b, kind).Driver
	client := queue.NewClient(drv, queue.ClientConfig{})
	x := drv.Executor()
	if err := x.QueueConfigSet(ctx, &driver.QueueConfigParams{Queue: "fair", DefaultTenantLimit: 64}); err != nil {
		b.Fatal(err)
	}
	if err := client.SetTenantWeight(ctx, "small", smallWeight); err != nil {
		b.Fatal(err)
	}
	unit := 20 * time.Microsecond
	fill := func(tenant string, cost, n int) {
		for start := 0; start < n; start += 500 {
			ps := make([]*driver.JobInsertParams, min(500, n-start))
			for i := range ps {
				ps[i] = &driver.JobInsertParams{Queue: "fair", Kind: "work", TenantID: tenant,
					Args: json.RawMessage(fmt.Sprintf(`{"cost":%d}`, cost)), MaxAttempts: 3, Cost: 1}
				if byCost {
					ps[i].Cost = cost
				}
			}
			if _, err := x.JobInsertMany(ctx, ps); err != nil {
				b.Fatal(err)
			}
		}
	}
	// Deeper than the run can drain (checked below).
	nBig, nSmall := int(d/(500*unit))*8+100, 60_000
	fill("big", 500, nBig)
	fill("small", 1, nSmall)
	var (
		mu   sync.Mutex
		done = map[string]float64{}
	)
	worker, err := queue.NewWorker(client, queue.WorkerConfig{
		Queues: map[string]queue.QueueConfig{"fair": {MaxWorkers: 8}},
		Handlers: map[string]queue.HandlerConfig{"work": {Handler: queue.HandlerFunc(func(ctx context.Context, t *queue.Task) error {
			var a struct{ Cost int }
			if err := json.Unmarshal(t.Job.Args, &a); err != nil {
				return err
			}
			time.Sleep(time.Duration(a.Cost) * unit)
			mu.Lock()
			done[t.Job.TenantID] += float64(a.Cost)
			mu.Unlock()
			return nil
		})}},
		ShutdownGrace: time.Millisecond,
		FetchCooldown: 200 * time.Microsecond,
	})
	if err != nil {
		b.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- worker.Run(ctx) }()
	time.Sleep(d)
	mu.Lock()
	big, small = done["big"], done["small"]
	mu.Unlock()
	if big >= float64(500*nBig) || small >= float64(nSmall) {
		b.Fatalf("a backlog ran out: big %v of %d, small %v of %d", big, 500*nBig, small, nSmall)
	}
	stop()
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	return big, small
}
