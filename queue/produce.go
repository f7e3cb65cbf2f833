package queue

import (
	"context"
	"sync"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// claimBatchMax caps how many jobs one claim asks for.
const claimBatchMax = 1000

// produce is one claim loop of a queue: it claims jobs while the queue has
// free slots and work, and otherwise waits for a wake-up on wake (a
// notification, a freed slot), or the poll interval. A queue has
// QueueConfig.Claimers loops; each reserves the slots it claims for, so
// together they never exceed MaxWorkers, and gate lets a second claim
// start only while claims come back full (see claimGate).
func (w *Worker) produce(ctx context.Context, queue string, wake <-chan struct{}, gate *claimGate) {
	qc := w.cfg.Queues[queue]
	share := min((qc.MaxWorkers+qc.Claimers-1)/qc.Claimers, claimBatchMax)
	poll := time.NewTimer(w.cfg.PollInterval)
	defer poll.Stop()
	var (
		backoff   time.Duration
		lastClaim time.Time
		again     time.Duration // the next wait while claims come back short and more
		waitTurn  bool          // the next claim waits for the claims in flight (claimTurnWait)
	)
	for {
		wait := w.cfg.PollInterval
		if want := w.active.reserve(queue, qc.MaxWorkers, share); want > 0 && !gate.enter() {
			w.active.unreserve(queue, want)
		} else if want > 0 {
			lastClaim = time.Now()
			n, more, err := w.claim(ctx, queue, want, waitTurn)
			w.active.unreserve(queue, want)
			gate.leave(err == nil && n == want)
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				backoff = min(max(2*backoff, 50*time.Millisecond), 2*time.Second)
				w.logger.Warn("claim failed; backing off", "queue", queue, "error", err, "backoff", backoff)
				if !sleepCtx(ctx, backoff) {
					return
				}
				continue
			}
			backoff = 0
			short := more && n < want
			again = claimAgain(again, short, w.cfg.FetchCooldown, w.cfg.PollInterval)
			switch {
			case short && !waitTurn:
				// Tenants with work were held by other claims: the next
				// claim, after the cooldown, waits for them to end rather
				// than skipping what they hold.
				waitTurn, wait = true, w.cfg.FetchCooldown
			case again > 0:
				// Held still (or beyond the claim's size): no notification
				// will say when they are free, so look again soon, backing
				// off.
				waitTurn, wait = false, again
			default:
				waitTurn = false
			}
			if n == want {
				// All we asked for: more work is likely. Bring in the
				// other loops, and claim again as soon as slots free up,
				// after the cooldown.
				w.wakeOthers(queue, wake)
				if !sleepCtx(ctx, w.cfg.FetchCooldown) {
					return
				}
				if w.active.busy(queue) < qc.MaxWorkers {
					continue
				}
			}
		}
		poll.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-wake:
			// The cooldown spaces claims; a wake-up long after the last
			// claim does not wait for it again.
			if !sleepCtx(ctx, time.Until(lastClaim.Add(w.cfg.FetchCooldown))) {
				return
			}
		case <-poll.C:
		}
	}
}

// claimTurnWait bounds how long a claim after one that found the tenants
// held waits for the claims in flight (driver.JobClaimParams.WaitTurn):
// they hold the tenants for a claim's transaction, 120-190 ms for 1,000
// jobs in a loaded K=4 fleet on 2 vCPUs (a bound of 100 ms gave up on a
// third of the turns there).
const claimTurnWait = time.Second

// claimAgain is the wait before the next claim after one that came back
// short: 0 (wait for a wake-up or the poll) unless more says claimable
// tenants were left untaken (driver.Executor.JobClaim), then twice the last
// wait, from ten cooldowns up to the poll interval.
func claimAgain(last time.Duration, more bool, cooldown, poll time.Duration) time.Duration {
	if !more {
		return 0
	}
	return min(max(2*last, 10*cooldown), poll)
}

// claimGate spaces the claim loops of one queue in a process: a claim
// may start while no other is in flight, or while the last one to return
// got all it asked for (the queue has more work than one loop takes).
// Without it every loop answers every wake-up: with little work, K
// processes x N loops claim a few jobs each per insert, contend for the
// same tenant rows, and the transactions per job multiply (measured on 16
// cores: 8 processes x 4 loops, 487 transactions per 1,000 jobs and a
// third of the throughput, docs/benchmarks.md).
type claimGate struct {
	mu       sync.Mutex
	inFlight int
	full     bool // the last claim to return got all it asked for
}

// enter reports whether a claim may start now, and if so counts it.
func (g *claimGate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.inFlight > 0 && !g.full {
		return false
	}
	g.inFlight++
	return true
}

// leave ends a claim that entered; full says it got all it asked for.
func (g *claimGate) leave(full bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight--
	g.full = full
}

// claim claims up to n jobs of queue, starts them and returns how many,
// and whether claimable tenants were left untaken (see JobClaim).
//
// The claim does not end with ctx (the claim loops' context, which the
// shutdown cancels): a claim in flight may already have committed on the
// server, and dropping its answer would leave its jobs running with no
// handler until their leases expired and a rescue spent an attempt. It is
// bounded by a lease instead; when the shutdown began meanwhile, the jobs
// go straight back (released: no attempt spent).
func (w *Worker) claim(ctx context.Context, queue string, n int, waitTurn bool) (claimed int, more bool, err error) {
	cctx, cancel := context.WithTimeout(w.storeCtx, w.cfg.LeaseDuration)
	defer cancel()
	sent := time.Now()
	p := &driver.JobClaimParams{
		Queue: queue, WorkerID: w.id, Max: n, LeaseDuration: w.cfg.LeaseDuration,
	}
	if waitTurn {
		p.WaitTurn = claimTurnWait
	}
	jobs, more, err := w.exec.JobClaim(cctx, p)
	if err != nil || len(jobs) == 0 {
		return 0, more, err
	}
	if ctx.Err() != nil {
		w.releaseClaimed(jobs)
		return 0, false, nil
	}
	if w.cfg.Hooks.Claimed != nil {
		w.cfg.Hooks.Claimed(jobs)
	}
	for _, job := range jobs {
		w.start(job, sent)
	}
	return len(jobs), more, nil
}

// releaseClaimed hands back jobs claimed as the shutdown began, before
// any of them started; what it cannot hand back is rescued after a lease.
func (w *Worker) releaseClaimed(jobs []*Job) {
	params := make([]*driver.JobFinishParams, len(jobs))
	for i, j := range jobs {
		params[i] = &driver.JobFinishParams{Lease: j.Lease(), Outcome: OutcomeReleased, WorkerID: w.id}
	}
	ctx, cancel := context.WithTimeout(w.storeCtx, finalWriteTimeout)
	defer cancel()
	if _, err := w.exec.JobFinish(ctx, params); err != nil {
		w.logger.Warn("could not hand back the jobs claimed as the shutdown began; they will be rescued",
			"jobs", len(jobs), "error", err)
		return
	}
	w.logger.Info("handed back the jobs claimed as the shutdown began", "jobs", len(jobs))
}

// wakeQueue nudges the claim loops of a queue without blocking.
func (w *Worker) wakeQueue(queue string) { w.wakeOthers(queue, nil) }

// wakeOthers nudges the claim loops of a queue other than the one that
// waits on self (nil: all of them), without blocking.
func (w *Worker) wakeOthers(queue string, self <-chan struct{}) {
	for _, ch := range w.wake[queue] {
		if ch == self {
			continue
		}
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// sleepCtx sleeps for d or until ctx ends; it reports whether ctx is alive.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
