package sqlite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/sqlite"
)

// BenchmarkClaimFinish measures the engine's hot path on SQLite: claim
// batches of 100 and complete each batch in one JobFinish. Jobs are
// inserted beforehand (not timed), spread over 100 tenants.
//
//	go test -run '^$' -bench ClaimFinish -benchtime 20000x ./sqlite
func BenchmarkClaimFinish(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		b.Run("sync="+sync, func(b *testing.B) {
			ctx := context.Background()
			d := benchDriver(b, sync)
			x := d.Executor()
			if err := x.QueueConfigSet(ctx, &driver.QueueConfigParams{Queue: "bench", DefaultTenantLimit: 10}); err != nil {
				b.Fatal(err)
			}
			benchInsert(b, x, b.N, 100)
			b.ResetTimer()
			done := 0
			for done < b.N {
				jobs, _, err := x.JobClaim(ctx, &driver.JobClaimParams{Queue: "bench", WorkerID: "w", Max: 100, LeaseDuration: time.Minute})
				if err != nil || len(jobs) == 0 {
					b.Fatalf("claim: %d jobs, %v", len(jobs), err)
				}
				ps := make([]*driver.JobFinishParams, len(jobs))
				for i, j := range jobs {
					ps[i] = &driver.JobFinishParams{Lease: j.Lease(), Outcome: queue.OutcomeCompleted, WorkerID: "w"}
				}
				if _, err := x.JobFinish(ctx, ps); err != nil {
					b.Fatal(err)
				}
				done += len(jobs)
			}
			b.ReportMetric(float64(done)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}

// BenchmarkInsert measures enqueues in batches of 100.
func BenchmarkInsert(b *testing.B) {
	d := benchDriver(b, "FULL")
	b.ResetTimer()
	benchInsert(b, d.Executor(), b.N, 100)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

func benchDriver(b *testing.B, sync string) *sqlite.Driver {
	b.Helper()
	ctx := context.Background()
	d, err := sqlite.OpenConfig(ctx, sqlite.Config{Path: b.TempDir() + "/bench.db", Synchronous: sync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = d.Close() })
	if err := d.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	return d
}

func benchInsert(b *testing.B, x driver.Executor, n, tenants int) {
	b.Helper()
	for start := 0; start < n; start += 100 {
		ps := make([]*driver.JobInsertParams, min(100, n-start))
		for i := range ps {
			ps[i] = &driver.JobInsertParams{
				Queue: "bench", Kind: "k", TenantID: fmt.Sprintf("t%d", (start+i)%tenants),
				Args: []byte(`{"doc":"x"}`), MaxAttempts: 3,
			}
		}
		if _, err := x.JobInsertMany(context.Background(), ps); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnqueueOne measures one enqueue per commit: the latency of a
// durable write.
func BenchmarkEnqueueOne(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		b.Run("sync="+sync, func(b *testing.B) {
			x := benchDriver(b, sync).Executor()
			p := []*driver.JobInsertParams{{Queue: "bench", Kind: "k", TenantID: "t", MaxAttempts: 3}}
			b.ResetTimer()
			for b.Loop() {
				if _, err := x.JobInsertMany(context.Background(), p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
