package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/docketq/docket/queue"
)

// latencyWarmup jobs run before the timed ones.
const latencyWarmup = 20

// latencyTimeout bounds the wait for one job to start.
const latencyTimeout = 10 * time.Second

// latencyPause describes the pause between two timed jobs.
const latencyPause = "5-15ms random, after the previous job started"

// mark is when the job with a sequence number started.
type mark struct {
	seq int
	at  time.Time
}

// runLatency enqueues Samples jobs one at a time into an idle worker, each
// a random 5-15ms after the previous one started (its no-op handler has
// returned by then and its completion is being stored, as in River's
// benchmark, whose completer batches completions for up to 250ms), and
// times enqueue-to-start: from just before Enqueue to the handler's first
// line.
// The main figures enqueue through the worker's own client (the in-process
// path); the notify_ figures enqueue through a second driver on the same
// database, so the wake-up travels as another process's would (LISTEN/NOTIFY
// on PostgreSQL), when the store serves several processes.
func runLatency(ctx context.Context, r *runner) (*Result, error) {
	client, err := r.newClient(ctx, 1)
	if err != nil {
		return nil, err
	}
	starts := make(chan mark, 1)
	handler := func(_ context.Context, t *queue.Task) error {
		now := time.Now()
		seq, _ := seqOf(t.Job)
		starts <- mark{seq, now}
		return nil
	}
	ws, err := startWorkers(ctx, client, r.workerConfig(r.cfg.Workers, handler, queue.Hooks{}))
	if err != nil {
		return nil, err
	}
	res := &Result{}
	p := &probe{starts: starts, n: r.cfg.Samples}
	r.progressf("timing %d jobs enqueued in process", p.n)
	local, err := p.run(ctx, client)
	if err == nil {
		addPercentiles(res, "", local, 50, 95, 99)
		res.add("max_ms", ms(local[len(local)-1]))
		res.add("samples", len(local))
		err = r.notifyLatency(ctx, p, res)
	}
	if err = errors.Join(err, ws.stop()); err != nil {
		return nil, err
	}
	r.settings(res, strconv.Itoa(r.cfg.Workers))
	res.set("pause", latencyPause)
	return res, nil
}

// notifyLatency repeats the probe through a second driver.
func (r *runner) notifyLatency(ctx context.Context, p *probe, res *Result) (err error) {
	if r.env.OpenPeer == nil {
		return nil
	}
	peer, err := r.env.OpenPeer(ctx)
	if err != nil {
		return fmt.Errorf("open second driver: %w", err)
	}
	defer func() { err = errors.Join(err, peer.Close()) }()
	r.progressf("timing %d jobs enqueued by another driver", p.n)
	remote, err := p.run(ctx, queue.NewClient(peer, queue.ClientConfig{Logger: r.cfg.Logger}))
	if err != nil {
		return err
	}
	addPercentiles(res, "notify_", remote, 50, 95, 99)
	return nil
}

// probe times jobs one at a time.
type probe struct {
	starts chan mark
	n      int
	next   int // sequence number of the next job
}

// run enqueues warm-up then timed jobs through c and returns the sorted
// enqueue-to-start times of the timed ones.
func (p *probe) run(ctx context.Context, c *queue.Client) ([]time.Duration, error) {
	var out []time.Duration
	for i := -latencyWarmup; i < p.n; i++ {
		d, err := p.one(ctx, c)
		if err != nil {
			return nil, err
		}
		if i >= 0 {
			out = append(out, d)
		}
		if !sleep(ctx, 5*time.Millisecond+time.Duration(rand.Int64N(int64(10*time.Millisecond)))) {
			return nil, ctx.Err()
		}
	}
	addPercentiles(&Result{}, "", out) // sorts
	return out, nil
}

func (p *probe) one(ctx context.Context, c *queue.Client) (time.Duration, error) {
	seq := p.next
	p.next++
	enqueued := time.Now()
	_, err := c.Enqueue(ctx, &queue.EnqueueParams{Kind: benchKind, TenantID: tenantName(seq % 10), Args: seqArgs{Seq: seq}})
	if err != nil {
		return 0, err
	}
	started, err := await(ctx, p.starts, seq)
	if err != nil {
		return 0, err
	}
	return started.Sub(enqueued), nil
}

func await(ctx context.Context, ch <-chan mark, seq int) (time.Time, error) {
	timeout := time.NewTimer(latencyTimeout)
	defer timeout.Stop()
	for {
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-timeout.C:
			return time.Time{}, fmt.Errorf("job %d did not start within %s", seq, latencyTimeout)
		case m := <-ch:
			if m.seq == seq {
				return m.at, nil
			}
		}
	}
}
