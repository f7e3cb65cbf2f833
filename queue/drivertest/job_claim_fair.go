package drivertest

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

func (s *suite) testJobClaimFairness(t *testing.T) {
	t.Run("BacklogDoesNotStarve", func(t *testing.T) {
		t.Parallel()
		for _, max := range []int{3, 10} {
			t.Run(fmt.Sprintf("Max%d", max), func(t *testing.T) {
				t.Parallel()
				f := s.setup(t)
				f.queueConfig(testQueue, 100)
				f.enqueueN("a", 100)
				f.enqueue("b")
				f.enqueue("c")
				got := tenantsOf(f.claim(testQueue, max, longLease))
				if got["b"] != 1 || got["c"] != 1 {
					t.Fatalf("first claim (Max %d) served %v; b and c must not wait behind a's backlog", max, got)
				}
				if limit := (max + 2) / 3; got["a"] > limit {
					t.Fatalf("a got %d jobs, want at most ceil(%d/3) = %d", got["a"], max, limit)
				}
			})
		}
	})
	t.Run("RoundRobin", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.queueConfig(testQueue, 10)
		for _, tenant := range []string{"a", "b", "c"} {
			f.enqueueN(tenant, 5)
		}
		var order []string
		for range 9 {
			order = append(order, f.claimOne().TenantID)
		}
		// Least recently served first: every three claims serve all three.
		for i := 0; i+3 <= len(order); i++ {
			w := order[i : i+3]
			if w[0] == w[1] || w[1] == w[2] || w[0] == w[2] {
				t.Fatalf("claims of Max 1 served %v; want round-robin over a, b, c", order)
			}
		}
	})
	t.Run("RoundRobinWithLimits", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueueN("a", 3)
		f.enqueueN("b", 3)
		var order []string
		for range 6 {
			j := f.claimOne()
			order = append(order, j.TenantID)
			f.complete(j)
		}
		for i := 1; i < len(order); i++ {
			if order[i] == order[i-1] {
				t.Fatalf("claim, complete, claim... served %v; want a and b alternating", order)
			}
		}
	})
}

func (s *suite) testJobClaimConcurrent(t *testing.T) {
	t.Run("Burst", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.queueConfig(testQueue, 2)
		const tenants, perTenant, claimers = 10, 10, 16
		for i := range tenants {
			f.enqueueN(fmt.Sprintf("t%d", i), perTenant)
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		var claimed []*queue.Job
		for range claimers {
			wg.Go(func() {
				<-start
				jobs, _, err := f.x.JobClaim(f.ctx, &driver.JobClaimParams{
					Queue: testQueue, WorkerID: workerID, Max: 5, LeaseDuration: longLease,
				})
				if err != nil {
					t.Errorf("JobClaim: %v", err)
				}
				mu.Lock()
				claimed = append(claimed, jobs...)
				mu.Unlock()
			})
		}
		close(start)
		wg.Wait()
		seen := make(map[int64]bool)
		for _, j := range claimed {
			if seen[j.ID] {
				t.Fatalf("job %d claimed twice", j.ID)
			}
			seen[j.ID] = true
		}
		for tenant, n := range tenantsOf(claimed) {
			if n > 2 {
				t.Fatalf("tenant %s has %d jobs running, over its limit of 2", tenant, n)
			}
		}
		for _, j := range f.claim(testQueue, 100, longLease) {
			t.Fatalf("claimers left %s claimable while every tenant should be at its limit", describe(j))
		}
	})
	t.Run("LimitInvariant", func(t *testing.T) {
		t.Parallel()
		s.claimInvariant(t)
	})
	t.Run("InsertWhileClaiming", func(t *testing.T) {
		t.Parallel()
		s.insertWhileClaiming(t)
	})
}

// insertWhileClaiming inserts jobs while claimers drain them: every insert
// must make its tenant claimable, even when it races with a claim that
// finds the tenant's queue empty. No JobSchedule sweep runs meanwhile.
func (s *suite) insertWhileClaiming(t *testing.T) {
	f := s.setup(t)
	const producers, perProducer, claimers = 4, 40, 4
	total := int64(producers * perProducer)
	var finished, inserted atomic.Int64
	deadline := time.Now().Add(30 * time.Second)
	var wg sync.WaitGroup
	for w := range producers {
		wg.Go(func() {
			for i := range perProducer {
				p := params(fmt.Sprintf("t%d", (w+i)%5))
				if _, err := f.x.JobInsertMany(f.ctx, []*driver.JobInsertParams{p}); err != nil {
					t.Errorf("JobInsertMany: %v", err)
					return
				}
				inserted.Add(1)
			}
		})
	}
	for w := range claimers {
		wg.Go(func() {
			for finished.Load() < total && time.Now().Before(deadline) && !t.Failed() {
				jobs, _, err := f.x.JobClaim(f.ctx, &driver.JobClaimParams{
					Queue: testQueue, WorkerID: fmt.Sprintf("w%d", w), Max: 2, LeaseDuration: longLease,
				})
				if err != nil {
					t.Errorf("JobClaim: %v", err)
					return
				}
				if len(jobs) == 0 {
					time.Sleep(time.Millisecond) // poll: nothing claimable now
					continue
				}
				ps := make([]*driver.JobFinishParams, len(jobs))
				for i, j := range jobs {
					ps[i] = &driver.JobFinishParams{Lease: j.Lease(), Outcome: queue.OutcomeCompleted}
				}
				if _, err := f.x.JobFinish(f.ctx, ps); err != nil {
					t.Errorf("JobFinish: %v", err)
					return
				}
				finished.Add(int64(len(jobs)))
			}
		})
	}
	wg.Wait()
	if n := finished.Load(); n != total && !t.Failed() {
		pending := f.list(&queue.JobListParams{States: []queue.State{queue.StatePending}, Limit: 1000})
		t.Fatalf("finished %d of %d inserted jobs in 30s; %d still pending and unclaimable: %v",
			n, inserted.Load(), len(pending), ids(pending))
	}
}

// claimInvariant drains jobs of several tenants with concurrent claimers
// that finish what they claim, and checks that no tenant ever runs more than
// its limit and that every job is claimed exactly once.
func (s *suite) claimInvariant(t *testing.T) {
	f := s.setup(t)
	const perTenant, claimers = 15, 16
	limits := map[string]int{"l1a": 1, "l1b": 1, "l1c": 1, "l3a": 3, "l3b": 3, "l3c": 3}
	total := 0
	for tenant, limit := range limits {
		if limit != 1 {
			f.tenantLimit(tenant, testQueue, limit)
		}
		f.enqueueN(tenant, perTenant)
		total += perTenant
	}

	var (
		mu       sync.Mutex
		running  = make(map[string]int)
		peak     = make(map[string]int)
		claims   = make(map[int64]int)
		finished atomic.Int64
	)
	deadline := time.Now().Add(60 * time.Second)
	var wg sync.WaitGroup
	for w := range claimers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for finished.Load() < int64(total) && time.Now().Before(deadline) && !t.Failed() {
				jobs, _, err := f.x.JobClaim(f.ctx, &driver.JobClaimParams{
					Queue: testQueue, WorkerID: fmt.Sprintf("w%d", w), Max: 1 + rng.IntN(3), LeaseDuration: longLease,
				})
				if err != nil {
					t.Errorf("JobClaim: %v", err)
					return
				}
				if len(jobs) == 0 {
					time.Sleep(time.Millisecond) // poll: nothing claimable now
					continue
				}
				mu.Lock()
				for _, j := range jobs {
					claims[j.ID]++
					running[j.TenantID]++
					peak[j.TenantID] = max(peak[j.TenantID], running[j.TenantID])
					if running[j.TenantID] > limits[j.TenantID] {
						t.Errorf("tenant %s has %d jobs running, over its limit of %d",
							j.TenantID, running[j.TenantID], limits[j.TenantID])
					}
				}
				mu.Unlock()
				time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond) // the job's work
				mu.Lock()
				for _, j := range jobs {
					running[j.TenantID]--
				}
				mu.Unlock()
				ps := make([]*driver.JobFinishParams, len(jobs))
				for i, j := range jobs {
					ps[i] = &driver.JobFinishParams{Lease: j.Lease(), Outcome: queue.OutcomeCompleted, WorkerID: j.WorkerID}
				}
				errs, err := f.x.JobFinish(f.ctx, ps)
				if err != nil {
					t.Errorf("JobFinish: %v", err)
					return
				}
				for i, err := range errs {
					if err != nil {
						t.Errorf("finish job %d: %v", jobs[i].ID, err)
					}
				}
				finished.Add(int64(len(jobs)))
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if n := finished.Load(); n != int64(total) {
		t.Fatalf("finished %d of %d jobs in the time allowed", n, total)
	}
	for id, n := range claims {
		if n != 1 {
			t.Fatalf("job %d claimed %d times, want once", id, n)
		}
	}
	if len(claims) != total {
		t.Fatalf("%d jobs claimed, want %d", len(claims), total)
	}
	t.Logf("peak running per tenant: %v", peak)
}
