package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docketq/docket/queue"
)

// The fairness scenario's shape, from the engine issue: tenant A floods,
// then 25 other tenants enqueue 10 jobs each, on 4 workers of 8 slots.
const (
	fairOthers      = 25
	fairOtherJobs   = 10
	fairWorkers     = 4
	fairSlots       = 8
	fairJobDuration = 10 * time.Millisecond
	fairDelay       = time.Second
)

// floodTenant is tenant A: enqueueSpread over one tenant names it so.
var floodTenant = tenantName(0)

// fairState records starts while the scenario runs.
type fairState struct {
	enqueued []time.Time // per sequence number of the others' jobs
	started  []time.Time
	aStarts  atomic.Int64 // jobs of A started so far
	left     atomic.Int64 // others' jobs not yet started
	window   atomic.Int32 // 0 before the others enqueue, 1 while they wait, 2 after
	aDuring  atomic.Int64 // A's starts while the others wait
	closed   chan struct{}
	mu       sync.Mutex
}

func (s *fairState) handler(ctx context.Context, t *queue.Task) error {
	now := time.Now()
	if t.Job.TenantID == floodTenant {
		s.aStarts.Add(1)
		if s.window.Load() == 1 {
			s.aDuring.Add(1)
		}
	} else if seq, ok := seqOf(t.Job); ok {
		s.mu.Lock()
		s.started[seq] = now
		s.mu.Unlock()
		if s.left.Add(-1) == 0 {
			s.window.Store(2)
			close(s.closed)
		}
	}
	if !sleep(ctx, fairJobDuration) {
		return ctx.Err()
	}
	return nil
}

// runFairness: tenant A's Jobs jobs (10ms each) are pending when 4 workers
// of 8 slots start; a second later 25 other tenants enqueue 10 jobs each.
// The tenant limit is the total number of slots, so A may use all the
// capacity nobody else needs and fairness comes from the round-robin claim
// alone. Figures: the others' enqueue-to-start percentiles, A's share of
// the starts while any of the others' jobs waited, and A's rate alone.
func runFairness(ctx context.Context, r *runner) (*Result, error) {
	flood, slots := r.cfg.jobsOr(50_000), fairWorkers*fairSlots
	client, err := r.newClient(ctx, slots)
	if err != nil {
		return nil, err
	}
	r.progressf("tenant A floods %d jobs", flood)
	if _, err := enqueueSpread(ctx, client, flood, 1, 0); err != nil {
		return nil, err
	}
	s := &fairState{
		enqueued: make([]time.Time, fairOthers*fairOtherJobs), started: make([]time.Time, fairOthers*fairOtherJobs),
		closed: make(chan struct{}),
	}
	s.left.Store(int64(len(s.started)))
	cfgs := make([]queue.WorkerConfig, fairWorkers)
	for i := range cfgs {
		cfgs[i] = r.workerConfig(fairSlots, s.handler, queue.Hooks{})
	}
	ws, err := startWorkers(ctx, client, cfgs...)
	if err != nil {
		return nil, err
	}
	res, err := r.fairRun(ctx, client, s)
	if err = errors.Join(err, ws.stop()); err != nil {
		return nil, err
	}
	r.settings(res, fmt.Sprintf("%dx%d", fairWorkers, fairSlots))
	res.set("tenant_limit", slots)
	res.set("job_duration", fairJobDuration.String())
	return res, nil
}

func (r *runner) fairRun(ctx context.Context, client *queue.Client, s *fairState) (*Result, error) {
	start := time.Now()
	if !sleep(ctx, fairDelay) {
		return nil, ctx.Err()
	}
	aAlone := float64(s.aStarts.Load()) / time.Since(start).Seconds()
	r.progressf("25 other tenants enqueue %d jobs each", fairOtherJobs)
	s.window.Store(1)
	if err := enqueueOthers(ctx, client, s); err != nil {
		return nil, err
	}
	timeout := time.NewTimer(stallTimeout)
	defer timeout.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timeout.C:
		return nil, fmt.Errorf("%d of the others' jobs did not start within %s", s.left.Load(), stallTimeout)
	case <-s.closed:
	}
	waits := make([]time.Duration, len(s.started))
	s.mu.Lock()
	for i := range waits {
		waits[i] = s.started[i].Sub(s.enqueued[i])
	}
	s.mu.Unlock()
	res := &Result{}
	addPercentiles(res, "", waits, 50, 95)
	res.add("max_ms", ms(waits[len(waits)-1]))
	aDuring := s.aDuring.Load()
	res.add("a_share", float64(aDuring)/float64(aDuring+int64(len(waits))))
	res.add("a_jobs_per_sec_alone", aAlone)
	res.add("a_backlog", r.cfg.jobsOr(50_000))
	return res, nil
}

// enqueueOthers enqueues the other tenants' jobs, one EnqueueMany per
// tenant, all at once.
func enqueueOthers(ctx context.Context, client *queue.Client, s *fairState) error {
	var wg sync.WaitGroup
	errs := make([]error, fairOthers)
	for o := range fairOthers {
		wg.Go(func() {
			ps := make([]*queue.EnqueueParams, fairOtherJobs)
			for j := range ps {
				ps[j] = &queue.EnqueueParams{
					Kind: benchKind, TenantID: fmt.Sprintf("other-%02d", o),
					Args: seqArgs{Seq: o*fairOtherJobs + j},
				}
			}
			now := time.Now()
			for j := range ps {
				s.enqueued[o*fairOtherJobs+j] = now
			}
			_, errs[o] = client.EnqueueMany(ctx, ps)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
