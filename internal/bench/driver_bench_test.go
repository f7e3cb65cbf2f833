package bench

// Go benchmarks of the engine's hot paths on both drivers: insert, claim
// and finish through the driver's executor, and a worker draining jobs.
// PostgreSQL runs on the test cluster (fsync off, so these measure the
// statements, not the disk; `docket bench` measures durably):
//
//	go test -run '^$' -bench . -benchmem ./internal/bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// benchEnv opens a fresh store of the named kind for a benchmark.
func benchEnv(b *testing.B, kind string) *Env {
	b.Helper()
	var store Store = &SQLiteStore{Dir: b.TempDir()}
	if kind == "postgres" {
		store = NewPostgresStore(pgtest.Default().ConnString("postgres"))
	}
	env, err := store.Open(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := env.Close(); err != nil {
			b.Error(err)
		}
	})
	return env
}

var driverKinds = []string{"postgres", "sqlite"}

// BenchmarkJobInsertMany inserts batches of jobs across 100 tenants.
func BenchmarkJobInsertMany(b *testing.B) {
	for _, kind := range driverKinds {
		for _, batch := range []int{1, 100, 1000} {
			b.Run(fmt.Sprintf("%s/batch=%d", kind, batch), func(b *testing.B) {
				env := benchEnv(b, kind)
				client := queue.NewClient(env.Driver, queue.ClientConfig{})
				ctx := b.Context()
				n := 0
				for b.Loop() {
					if _, err := client.EnqueueMany(ctx, spreadParams(n, n+batch, 100)); err != nil {
						b.Fatal(err)
					}
					n += batch
				}
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "jobs/s")
			})
		}
	}
}

// BenchmarkJobClaimFinish claims up to max jobs and finishes them, with a
// backlog of pending jobs over 100 tenants (limit 1000 each), refilled
// outside the timer.
func BenchmarkJobClaimFinish(b *testing.B) {
	for _, kind := range driverKinds {
		for _, claimMax := range []int{1, 10, 100} {
			b.Run(fmt.Sprintf("%s/max=%d", kind, claimMax), func(b *testing.B) {
				env := benchEnv(b, kind)
				ctx := b.Context()
				client := queue.NewClient(env.Driver, queue.ClientConfig{})
				if err := client.SetQueueDefaultLimit(ctx, queue.DefaultQueue, 1000); err != nil {
					b.Fatal(err)
				}
				exec := env.Driver.Executor()
				params := &driver.JobClaimParams{Queue: queue.DefaultQueue, WorkerID: "b", Max: claimMax, LeaseDuration: time.Minute}
				pending, jobs := 0, 0
				for b.Loop() {
					if pending < claimMax {
						b.StopTimer()
						if _, err := enqueueSpread(ctx, client, 20*claimMax+1000, 100, 0); err != nil {
							b.Fatal(err)
						}
						pending += 20*claimMax + 1000
						b.StartTimer()
					}
					claimed, _, err := exec.JobClaim(ctx, params)
					if err != nil {
						b.Fatal(err)
					}
					if err := finishAll(ctx, exec, claimed); err != nil {
						b.Fatal(err)
					}
					pending -= len(claimed)
					jobs += len(claimed)
				}
				b.ReportMetric(float64(jobs)/b.Elapsed().Seconds(), "jobs/s")
			})
		}
	}
}

// BenchmarkWorkerDrain runs a worker over b.N pre-inserted no-op jobs
// across 100 tenants, with the tuned settings of docket bench.
func BenchmarkWorkerDrain(b *testing.B) {
	for _, kind := range driverKinds {
		b.Run(kind, func(b *testing.B) {
			env := benchEnv(b, kind)
			ctx := b.Context()
			cfg := Config{Workers: 500}
			cfg.setDefaults()
			r := &runner{cfg: &cfg, env: env, name: "drain"}
			client, err := r.newClient(ctx, cfg.Workers)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := enqueueSpread(ctx, client, b.N, 100, 0); err != nil {
				b.Fatal(err)
			}
			var done tally
			b.ResetTimer()
			ws, err := startWorkers(ctx, client, r.workerConfig(cfg.Workers, noop, queue.Hooks{Finished: done.hook}))
			if err != nil {
				b.Fatal(err)
			}
			if err := r.waitFor(ctx, done.n.Load, int64(b.N)); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := ws.stop(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}
