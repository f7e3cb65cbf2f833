package postgres_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// BenchmarkDrain measures claim + finish throughput: b.N jobs over 100
// tenants (limit 10,000 each), drained by goroutines that claim up to 100
// jobs and finish them in one batch, as the engine's producer and
// completer do. It reports jobs/s.
//
//	go test -run '^$' -bench Drain -benchtime 200000x ./postgres
func BenchmarkDrain(b *testing.B) {
	for _, tenants := range []int{1, 1000} {
		for _, workers := range []int{2, 4} {
			b.Run(fmt.Sprintf("tenants=%d/workers=%d", tenants, workers), func(b *testing.B) {
				benchDrain(b, tenants, workers, 100)
			})
		}
	}
}

func benchDrain(b *testing.B, nTenants, workers, batch int) {
	d := newDriver(b)
	x := d.Executor()
	ctx := b.Context()
	if err := x.QueueConfigSet(ctx, &driver.QueueConfigParams{Queue: "q", DefaultTenantLimit: 10000}); err != nil {
		b.Fatal(err)
	}
	tenants := tenantNames("t", nTenants)
	ps := make([]*driver.JobInsertParams, 0, 5000)
	for i := range b.N {
		ps = append(ps, job(tenants[i%len(tenants)]))
		if len(ps) == cap(ps) || i == b.N-1 {
			if _, err := x.JobInsertMany(ctx, ps); err != nil {
				b.Fatal(err)
			}
			ps = ps[:0]
		}
	}
	if _, err := d.Pool().Exec(ctx, "VACUUM ANALYZE"); err != nil {
		b.Fatal(err)
	}
	var done atomic.Int64
	b.ResetTimer()
	start, cpu0 := time.Now(), serverCPU()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for done.Load() < int64(b.N) && !b.Failed() {
				jobs, _, err := x.JobClaim(ctx, &driver.JobClaimParams{Queue: "q", WorkerID: fmt.Sprint(w), Max: batch, LeaseDuration: time.Minute})
				if err != nil {
					b.Error(err)
					return
				}
				if len(jobs) == 0 {
					continue
				}
				fps := make([]*driver.JobFinishParams, len(jobs))
				for i, j := range jobs {
					fps[i] = &driver.JobFinishParams{Lease: j.Lease(), Outcome: queue.OutcomeCompleted}
				}
				if _, err := x.JobFinish(ctx, fps); err != nil {
					b.Error(err)
					return
				}
				done.Add(int64(len(jobs)))
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "jobs/s")
	if cpu := serverCPU() - cpu0; cpu > 0 {
		// What the server spent per job: on a machine shared with other
		// work, jobs/s understates; 2 cores / this bounds it.
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "server-cpu-µs/job")
	}
}

// serverCPU returns the CPU time used so far by the processes of the
// test cluster (Linux; zero elsewhere or on an external server).
func serverCPU() time.Duration {
	c := pgtest.Default()
	if c == nil || c.PID() == 0 {
		return 0
	}
	postmaster := strconv.Itoa(c.PID())
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	for _, path := range dirs {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// Fields after the command name, which is in parentheses.
		_, rest, ok := strings.Cut(string(b), ") ")
		f := strings.Fields(rest)
		if !ok || len(f) < 13 || (f[1] != postmaster && filepath.Base(filepath.Dir(path)) != postmaster) {
			continue
		}
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += utime + stime
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}
