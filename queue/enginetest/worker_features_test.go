package queue_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// Progress is stored, coalesced, and published as events in order.
func TestTask_Progress(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		events, unsubscribe := c.Bus().Subscribe(1024, nil)
		defer unsubscribe()
		gate := make(chan struct{})
		h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			for i := range 100 {
				if err := task.Progress(ctx, "parsing", i, "page"); err != nil {
					return err
				}
			}
			if err := task.Progress(ctx, "chunking", 60, "chunks"); err != nil {
				return err
			}
			<-gate
			return nil
		})
		startWorker(t, c, fastConfig(map[string]queue.HandlerConfig{"doc": {Handler: h}}, 1))
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "doc", TenantID: "a"})
		waitFor(t, 5*time.Second, "progress stored", func() bool {
			j, err := c.Get(ctx, job.ID)
			return err == nil && j.Stage == "chunking" && j.Progress == 60 && j.ProgressMessage == "chunks"
		})
		close(gate)
		waitState(t, c, job.ID, queue.StateCompleted, 5*time.Second)
		var types []queue.EventType
		progress := 0
		for len(types) == 0 || types[len(types)-1] != queue.EventCompleted {
			select {
			case e := <-events:
				if e.Job.ID != job.ID {
					continue
				}
				if e.Type == queue.EventProgress {
					progress++
				}
				types = append(types, e.Type)
			case <-time.After(5 * time.Second):
				t.Fatalf("events so far: %v", types)
			}
		}
		// The client publishes "inserted" after its insert returns and the
		// worker "started" after its claim, from different goroutines:
		// "inserted" may come anywhere before "completed", even after some
		// progress. "started" comes before any progress.
		if n := slices.Index(types, queue.EventInserted); n < 0 || slices.Contains(types[n+1:], queue.EventInserted) {
			t.Errorf("events %v, want one inserted", types)
		}
		if s, p := slices.Index(types, queue.EventStarted), slices.Index(types, queue.EventProgress); s < 0 || p >= 0 && p < s {
			t.Errorf("events %v, want started before progress", types)
		}
		if progress < 2 || progress > 10 {
			t.Errorf("%d progress events for 101 reports, want them coalesced to a few", progress)
		}
	})
}

// Permanent errors fail at once; snoozes come back without spending an
// attempt; delayed jobs wait for their time.
func TestWorker_Outcomes(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		var snoozes atomic.Int32
		h := queue.HandlerFunc(func(_ context.Context, task *queue.Task) error {
			switch task.Job.Kind {
			case "permanent":
				return queue.Permanent(errors.New("bad input"))
			case "snooze":
				if snoozes.Add(1) == 1 {
					return queue.Snooze(100 * time.Millisecond)
				}
			}
			return nil
		})
		handlers := map[string]queue.HandlerConfig{"permanent": {Handler: h}, "snooze": {Handler: h}, "later": {Handler: h}}
		startWorker(t, c, fastConfig(handlers, 3))

		p := enqueue(t, c, &queue.EnqueueParams{Kind: "permanent", TenantID: "a"})
		failed := waitState(t, c, p.ID, queue.StateFailed, 5*time.Second)
		if failed.Attempt != 1 || failed.ErrorMessage != "bad input" {
			t.Errorf("permanent: attempt %d error %q", failed.Attempt, failed.ErrorMessage)
		}

		sz := enqueue(t, c, &queue.EnqueueParams{Kind: "snooze", TenantID: "b"})
		done := waitState(t, c, sz.ID, queue.StateCompleted, 5*time.Second)
		if done.Attempt != 1 {
			t.Errorf("snoozed job finished at attempt %d, want 1 (snooze spends none)", done.Attempt)
		}

		at := time.Now().Add(300 * time.Millisecond)
		later := enqueue(t, c, &queue.EnqueueParams{Kind: "later", TenantID: "c", RunAt: at})
		if later.State != queue.StateScheduled {
			t.Errorf("delayed job state %s, want scheduled", later.State)
		}
		done = waitState(t, c, later.ID, queue.StateCompleted, 5*time.Second)
		if done.StartedAt.Before(at.Add(-50 * time.Millisecond)) {
			t.Errorf("delayed job started at %s, before its time %s", done.StartedAt, at)
		}
	})
}

// Position counts the jobs ahead within the tenant only.
func TestClient_Position(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		var last *queue.Job
		for range 3 {
			last = enqueue(t, c, &queue.EnqueueParams{Kind: "k", TenantID: "a"})
		}
		enqueue(t, c, &queue.EnqueueParams{Kind: "k", TenantID: "b"})
		pos, err := c.Position(ctx, last.ID)
		if err != nil {
			t.Fatal(err)
		}
		if pos.Ahead != 2 {
			t.Errorf("ahead = %d, want 2", pos.Ahead)
		}
		urgent := enqueue(t, c, &queue.EnqueueParams{Kind: "k", TenantID: "a", Priority: 10})
		pos, err = c.Position(ctx, urgent.ID)
		if err != nil || pos.Ahead != 0 {
			t.Errorf("priority job: ahead %v, %v; want 0", pos, err)
		}
	})
}

func TestClient_EnqueueInvalid(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		for _, p := range []*queue.EnqueueParams{
			{Kind: "", TenantID: "a"},
			{Kind: "k", TenantID: ""},
			{Kind: "k", TenantID: "a", Queue: "Bad Queue"},
			{Kind: "k", TenantID: "a", Args: func() {}},
			{Kind: "k", TenantID: "a", Priority: 5000},
			{Kind: "k", TenantID: "a", Metadata: map[string]string{"": "x"}},
			{Kind: "k", TenantID: "a", Metadata: map[string]string{"k": strings.Repeat("x", queue.MaxMetadataBytes)}},
			{Kind: "k", TenantID: "a", Metadata: func() map[string]string {
				m := map[string]string{}
				for i := range queue.MaxMetadataEntries + 1 {
					m[strconv.Itoa(i)] = ""
				}
				return m
			}()},
		} {
			if _, err := c.Enqueue(context.Background(), p); !errors.Is(err, queue.ErrInvalid) {
				t.Errorf("Enqueue(%+v) = %v, want ErrInvalid", p, err)
			}
		}
	})
}
