package queue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// TestClient_PauseResume: with polling all but off, a job enqueued while
// its queue or tenant is paused starts only once it is resumed, and then
// at once: the resume wakes the worker's claim loops. Positions say
// paused meanwhile; Pauses lists what is paused.
func TestClient_PauseResume(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		l := newLedger()
		cfg := fastConfig(map[string]queue.HandlerConfig{"noop": noop(l)}, 2)
		cfg.PollInterval = time.Hour // only wake-ups start jobs
		startWorker(t, c, cfg)

		cases := []struct {
			name           string
			pause, resume  func() error
			queue, tenant  string
			paused, listed func(p *queue.Pauses) bool
		}{
			{
				name:   "queue",
				pause:  func() error { return c.PauseQueue(ctx, queue.DefaultQueue) },
				resume: func() error { return c.ResumeQueue(ctx, queue.DefaultQueue) },
				listed: func(p *queue.Pauses) bool { return p.QueuePaused(queue.DefaultQueue) },
			},
			{
				name:   "tenant",
				pause:  func() error { return c.PauseTenant(ctx, "a") },
				resume: func() error { return c.ResumeTenant(ctx, "a") },
				listed: func(p *queue.Pauses) bool { return p.TenantPaused("a") },
			},
		}
		for _, tc := range cases {
			if err := tc.pause(); err != nil {
				t.Fatalf("%s: pause: %v", tc.name, err)
			}
			p, err := c.Pauses(ctx)
			if err != nil || !tc.listed(p) {
				t.Fatalf("%s: Pauses = %+v, %v; want it listed", tc.name, p, err)
			}
			j := enqueue(t, c, &queue.EnqueueParams{Kind: "noop", TenantID: "a"})
			pos, err := c.Position(ctx, j.ID)
			if err != nil || !pos.Paused || !pos.EstimatedStart.IsZero() {
				t.Fatalf("%s: Position = %+v, %v; want Paused with no estimate", tc.name, pos, err)
			}
			if got := l.count(j.ID); got != 0 {
				t.Fatalf("%s: job %d ran %d times while paused", tc.name, j.ID, got)
			}
			if err := tc.resume(); err != nil {
				t.Fatalf("%s: resume: %v", tc.name, err)
			}
			waitState(t, c, j.ID, queue.StateCompleted, 10*time.Second)
			if p, err := c.Pauses(ctx); err != nil || tc.listed(p) {
				t.Fatalf("%s: Pauses after resume = %+v, %v", tc.name, p, err)
			}
		}
	})
}

func TestClient_PauseInvalid(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		for name, err := range map[string]error{
			"queue Bad":   c.PauseQueue(ctx, "Bad"),
			"queue \"\"":  c.ResumeQueue(ctx, ""),
			"tenant \"\"": c.PauseTenant(ctx, ""),
			"long tenant": c.ResumeTenant(ctx, string(make([]byte, 201))),
		} {
			if !errors.Is(err, queue.ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
	})
}
