package queue_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// Several claim loops and flushers per worker: together they never run
// more than MaxWorkers handlers, and every job runs exactly once.
func TestWorker_ClaimersAndCompleters(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		const maxWorkers, jobs = 6, 300
		var running, peak atomic.Int32
		ledger := newLedger()
		h := queue.HandlerFunc(func(_ context.Context, task *queue.Task) error {
			ledger.record(task)
			n := running.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			time.Sleep(time.Millisecond)
			running.Add(-1)
			return nil
		})
		cfg := fastConfig(map[string]queue.HandlerConfig{"work": {Handler: h}}, maxWorkers)
		cfg.Queues = map[string]queue.QueueConfig{queue.DefaultQueue: {MaxWorkers: maxWorkers, Claimers: 3}}
		cfg.Completers = 3
		if err := c.SetQueueDefaultLimit(context.Background(), queue.DefaultQueue, 2); err != nil {
			t.Fatal(err)
		}
		ps := make([]*queue.EnqueueParams, jobs)
		for i := range ps {
			ps[i] = &queue.EnqueueParams{Kind: "work", TenantID: fmt.Sprintf("t%d", i%10)}
		}
		res, err := c.EnqueueMany(context.Background(), ps)
		if err != nil {
			t.Fatal(err)
		}
		startWorker(t, c, cfg)
		for _, r := range res {
			waitState(t, c, r.Job.ID, queue.StateCompleted, 30*time.Second)
		}
		if p := peak.Load(); p > maxWorkers {
			t.Errorf("%d handlers ran at once, MaxWorkers %d", p, maxWorkers)
		}
		if n, runs := ledger.total(); n != jobs || runs != jobs {
			t.Errorf("%d jobs ran %d times, want %d once each", n, runs, jobs)
		}
	})
}

// Claimers outside 1..min(MaxWorkers, 64) and Completers outside 1..64
// are refused.
func TestWorkerConfig_ClaimersInvalid(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		for _, cfg := range []queue.WorkerConfig{
			{Queues: map[string]queue.QueueConfig{"q": {MaxWorkers: 2, Claimers: 3}}},
			{Queues: map[string]queue.QueueConfig{"q": {MaxWorkers: 2, Claimers: -1}}},
			{Completers: 65},
		} {
			if _, err := queue.NewWorker(c, cfg); err == nil {
				t.Errorf("NewWorker(%+v) accepted", cfg)
			}
		}
	})
}

// A maintenance election interval of half the leader TTL or more left
// the maintenance stopped part of each interval (a term's services run
// for the TTL less the interval, at most half of it): refused.
func TestWorkerConfig_ElectIntervalInvalid(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		for _, m := range []queue.MaintenanceConfig{
			{LeaderTTL: time.Second, ElectInterval: 500 * time.Millisecond},
			{LeaderTTL: time.Second, ElectInterval: 2 * time.Second},
			{ElectInterval: 10 * time.Second}, // the default TTL, 15 s
		} {
			if _, err := queue.NewWorker(c, queue.WorkerConfig{Maintenance: m}); !errors.Is(err, queue.ErrInvalid) {
				t.Errorf("NewWorker with %s / %s: %v, want ErrInvalid", m.ElectInterval, m.LeaderTTL, err)
			}
		}
		ok := queue.MaintenanceConfig{LeaderTTL: time.Second, ElectInterval: 400 * time.Millisecond}
		if _, err := queue.NewWorker(c, queue.WorkerConfig{Maintenance: ok}); err != nil {
			t.Errorf("NewWorker with 400ms / 1s: %v", err)
		}
	})
}
