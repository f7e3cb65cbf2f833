package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

const (
	latencyWarmup  = 20
	latencyTimeout = 10 * time.Second
)

type mark struct {
	seq int
	at  time.Time
}

// probe times jobs one at a time: enqueue, wait for the start, pause
// 5-15ms (River's completer stores the completion within 250ms), next.
type probe struct {
	starts  chan mark
	n, next int
}

// runLatency times enqueue-to-start of jobs inserted one at a time into an
// idle client: first through the working client itself, then (notify_
// figures) through an insert-only client on its own pool, as another
// process would.
func runLatency(ctx context.Context, cfg *config, db *database) (*result, error) {
	p := &probe{starts: make(chan mark, 1), n: cfg.samples}
	b, err := newBench(cfg, db.pool, func(seq int, at time.Time) { p.starts <- mark{seq, at} })
	if err != nil {
		return nil, err
	}
	stop, err := b.start(ctx)
	if err != nil {
		return nil, err
	}
	res := &result{}
	fmt.Fprintf(cfg.progress, "riverbench latency: timing %d jobs\n", p.n)
	local, err := p.run(ctx, b.client)
	if err == nil {
		percentiles(res, "", local, 50, 95, 99)
		res.add("max_ms", float64(local[len(local)-1])/float64(time.Millisecond))
		res.add("samples", len(local))
		err = p.notify(ctx, cfg, db, res)
	}
	if err = errors.Join(err, stop()); err != nil {
		return nil, err
	}
	res.set("pause", "5-15ms random, after the previous job started")
	return res, nil
}

// notify repeats the probe through an insert-only client on another pool.
func (p *probe) notify(ctx context.Context, cfg *config, db *database, res *result) error {
	pool, err := pgxpool.New(ctx, db.connString)
	if err != nil {
		return err
	}
	defer pool.Close()
	inserter, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: cfg.logger})
	if err != nil {
		return err
	}
	fmt.Fprintf(cfg.progress, "riverbench latency: timing %d jobs inserted by another client\n", p.n)
	remote, err := p.run(ctx, inserter)
	if err != nil {
		return err
	}
	percentiles(res, "notify_", remote, 50, 95, 99)
	return nil
}

func (p *probe) run(ctx context.Context, c *river.Client[pgx.Tx]) ([]time.Duration, error) {
	var out []time.Duration
	for i := -latencyWarmup; i < p.n; i++ {
		d, err := p.one(ctx, c)
		if err != nil {
			return nil, err
		}
		if i >= 0 {
			out = append(out, d)
		}
		if !sleep(ctx, randomPause()) {
			return nil, ctx.Err()
		}
	}
	percentiles(&result{}, "", out) // sorts
	return out, nil
}

func (p *probe) one(ctx context.Context, c *river.Client[pgx.Tx]) (time.Duration, error) {
	seq := p.next
	p.next++
	enqueued := time.Now()
	if _, err := c.Insert(ctx, benchArgs{Seq: seq}, nil); err != nil {
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
