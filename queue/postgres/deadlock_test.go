package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// TestDeadlock_FinishHeartbeatInsert runs, for a few seconds on a few
// shared tenants, what a loaded deployment runs at once: inserts of jobs of
// every tenant, claims, finishes of batches spanning tenants (in any order
// of jobs), and heartbeats of the same jobs (in another order). None may
// fail with deadlock_detected (40P01): every statement takes its locks in
// one order (tenant_lock.go).
func TestDeadlock_FinishHeartbeatInsert(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("stress test")
	}
	f := setup(t)
	tenants := []string{"t0", "t1", "t2", "t3", "t4", "t5"}
	for _, tenant := range tenants {
		if err := f.x.TenantLimitSet(f.ctx, &driver.TenantLimitParams{TenantID: tenant, Queue: "q", MaxRunning: 1000}); err != nil {
			t.Fatal(err)
		}
	}
	f.enqueue(20, tenants...)
	ctx, cancel := context.WithTimeout(f.ctx, 4*time.Second)
	defer cancel()
	s := &stress{f: f, tenants: tenants, held: make(map[queue.Lease]struct{})}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { s.loop(ctx, s.insert) })
	}
	for range 3 {
		wg.Go(func() { s.loop(ctx, s.claimAndFinish) })
	}
	for range 2 {
		wg.Go(func() { s.loop(ctx, s.heartbeat) })
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.deadlocks > 0 {
		t.Errorf("%d statements failed with deadlock_detected (40P01); first: %v", s.deadlocks, s.firstErr)
	} else if s.firstErr != nil {
		t.Errorf("statement failed: %v", s.firstErr)
	}
	if s.finished == 0 || s.beats == 0 {
		t.Errorf("%d finishes and %d heartbeats: the test exercised nothing", s.finished, s.beats)
	}
	t.Logf("%d finished, %d heartbeat rounds, %d inserted", s.finished, s.beats, s.inserted)
}

// stress is the shared state of the deadlock test's goroutines.
type stress struct {
	f       *fixture
	tenants []string

	mu        sync.Mutex
	held      map[queue.Lease]struct{} // claimed, not yet finished
	deadlocks int
	firstErr  error
	finished  int
	beats     int
	inserted  int
}

// loop runs step until ctx ends.
func (s *stress) loop(ctx context.Context, step func(ctx context.Context) error) {
	for ctx.Err() == nil {
		err := step(ctx)
		if err == nil || ctx.Err() != nil {
			continue
		}
		s.mu.Lock()
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "40P01" {
			s.deadlocks++
			s.f.t.Logf("%v\n%s", err, pgErr.Detail)
		}
		if s.firstErr == nil {
			s.firstErr = err
		}
		s.mu.Unlock()
	}
}

// insert adds a batch of jobs of every tenant, in a random order.
func (s *stress) insert(ctx context.Context) error {
	var ps []*driver.JobInsertParams
	for _, i := range rand.Perm(len(s.tenants)) {
		for range rand.IntN(3) {
			ps = append(ps, job(s.tenants[i]))
		}
	}
	if len(ps) == 0 {
		return nil
	}
	if _, err := s.f.x.JobInsertMany(ctx, ps); err != nil {
		return err
	}
	s.mu.Lock()
	s.inserted += len(ps)
	s.mu.Unlock()
	return nil
}

// claimAndFinish claims jobs, then finishes them in two batches of random
// order with mixed outcomes, so that finishes of all tenants overlap.
func (s *stress) claimAndFinish(ctx context.Context) error {
	jobs, _, err := s.f.x.JobClaim(ctx, &driver.JobClaimParams{Queue: "q", WorkerID: "w", Max: 40, LeaseDuration: time.Hour})
	if err != nil {
		return err
	}
	s.mu.Lock()
	for _, j := range jobs {
		s.held[j.Lease()] = struct{}{}
	}
	s.mu.Unlock()
	rand.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
	for len(jobs) > 0 {
		batch := jobs[:min(len(jobs), 1+rand.IntN(20))]
		jobs = jobs[len(batch):]
		ps := make([]*driver.JobFinishParams, len(batch))
		for i, j := range batch {
			ps[i] = &driver.JobFinishParams{Lease: j.Lease(), Outcome: queue.OutcomeCompleted, WorkerID: "w"}
			if i%4 == 3 {
				ps[i].Outcome = queue.OutcomeReleased
			}
		}
		if _, err := s.f.x.JobFinish(ctx, ps); err != nil {
			return fmt.Errorf("finish: %w", err)
		}
		s.mu.Lock()
		for _, j := range batch {
			delete(s.held, j.Lease())
		}
		s.finished += len(batch)
		s.mu.Unlock()
	}
	return nil
}

// heartbeat renews every held lease, in map (random) order.
func (s *stress) heartbeat(ctx context.Context) error {
	s.mu.Lock()
	leases := make([]queue.Lease, 0, len(s.held))
	for l := range s.held {
		leases = append(leases, l)
	}
	s.mu.Unlock()
	if len(leases) == 0 {
		return nil
	}
	if _, err := s.f.x.JobHeartbeat(ctx, &driver.JobHeartbeatParams{Leases: leases, LeaseDuration: time.Hour}); err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	s.mu.Lock()
	s.beats++
	s.mu.Unlock()
	return nil
}
