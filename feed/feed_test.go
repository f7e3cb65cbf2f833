package feed_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/feed"
	"github.com/docketq/docket/queue"
)

func TestFeed_SnapshotThenChanges(t *testing.T) {
	verifyNoLeaks(t)
	client := newSQLiteClient(t)
	f := runFeed(t, feed.Config{Client: client})
	a := enqueue(t, client, "acme", "a", 0)
	b := enqueue(t, client, "acme", "b", 0)
	c := enqueue(t, client, "acme", "c", 0)
	urgent := enqueue(t, client, "acme", "urgent", 5)
	enqueue(t, client, "other", "x", 0)

	sub := subscribe(t, f, "acme")
	want := map[int64]int{urgent.ID: 0, a.ID: 1, b.ID: 2, c.ID: 3}
	if len(sub.Snapshot) != len(want) {
		t.Fatalf("snapshot has %d jobs, want %d: %+v", len(sub.Snapshot), len(want), sub.Snapshot)
	}
	for i, ch := range sub.Snapshot {
		if ch.Job.TenantID != "acme" || ch.Job.State != queue.StatePending || ch.Position != want[ch.Job.ID] || ch.Position != i {
			t.Errorf("snapshot[%d] = job %d %s at %d; want position %d", i, ch.Job.ID, ch.Job.State, ch.Position, want[ch.Job.ID])
		}
		if ch.ID == "" {
			t.Errorf("snapshot[%d] has no event id", i)
		}
	}

	// An in-process enqueue arrives with its position.
	d := enqueue(t, client, "acme", "d", 0)
	next(t, sub, "acme", at(d.ID, queue.StatePending, 4))

	s := newScript()
	runWorker(t, client, s)
	// The job ahead started: everyone moves up.
	expect(t, sub, "acme", is(urgent.ID, queue.StateRunning, "downloading", 5),
		at(a.ID, queue.StatePending, 0), at(d.ID, queue.StatePending, 3))
	s.step(t, "urgent")
	next(t, sub, "acme", is(urgent.ID, queue.StateRunning, "parsing", 30))
	s.step(t, "urgent")
	next(t, sub, "acme", is(urgent.ID, queue.StateRunning, "parsing", 50))
	s.step(t, "urgent")
	expect(t, sub, "acme", func(c feed.Change) bool {
		return is(urgent.ID, queue.StateCompleted, "", 100)(c) && c.Position == -1 && !c.Job.CompletedAt.IsZero()
	}, is(a.ID, queue.StateRunning, "downloading", 5), at(d.ID, queue.StatePending, 2))
}

func TestFeed_CancelMovesPositions(t *testing.T) {
	verifyNoLeaks(t)
	client := newSQLiteClient(t)
	f := runFeed(t, feed.Config{Client: client})
	a := enqueue(t, client, "acme", "a", 0)
	b := enqueue(t, client, "acme", "b", 0)
	sub := subscribe(t, f, "acme")
	if _, err := client.Cancel(t.Context(), a.ID, "acme"); err != nil {
		t.Fatal(err)
	}
	expect(t, sub, "acme", at(a.ID, queue.StateCancelled, -1), at(b.ID, queue.StatePending, 0))
}

func TestFeed_Since(t *testing.T) {
	verifyNoLeaks(t)
	client := newSQLiteClient(t)
	f := runFeed(t, feed.Config{Client: client, PollInterval: 50 * time.Millisecond})
	a := enqueue(t, client, "acme", "a", 0)
	sub := subscribe(t, f, "acme")
	last := sub.Snapshot[0].ID
	b := enqueue(t, client, "acme", "b", 0)
	enqueue(t, client, "other", "x", 0)
	if _, err := client.Cancel(t.Context(), a.ID, "acme"); err != nil {
		t.Fatal(err)
	}
	next(t, sub, "acme", at(b.ID, queue.StatePending, 0))

	// A feed of another process, or after a restart, resumes the id too.
	for name, g := range map[string]*feed.Feed{"same": f, "restarted": runFeed(t, feed.Config{Client: client})} {
		changes, err := g.Since(t.Context(), "acme", last)
		if err != nil {
			t.Fatal(err)
		}
		got := map[int64]feed.Change{}
		for _, c := range changes {
			if c.Job.TenantID != "acme" || c.ID == "" {
				t.Fatalf("%s: change %+v", name, c)
			}
			got[c.Job.ID] = c
		}
		if c := got[a.ID]; c.Job == nil || c.Job.State != queue.StateCancelled || c.Position != -1 {
			t.Errorf("%s: cancelled job a: %+v", name, c)
		}
		if c := got[b.ID]; c.Job == nil || c.Job.State != queue.StatePending || c.Position != 0 {
			t.Errorf("%s: new job b: %+v", name, c)
		}
	}
	if _, err := f.Since(t.Context(), "acme", "garbage"); !errors.Is(err, queue.ErrInvalid) {
		t.Errorf("Since(garbage) = %v, want ErrInvalid", err)
	}
}

func TestFeed_SlowSubscriberDropped(t *testing.T) {
	verifyNoLeaks(t)
	client := newSQLiteClient(t)
	dropped := make(chan struct{}, 1)
	logger := slog.New(onMessage{"subscriber too slow; dropped", dropped})
	f := runFeed(t, feed.Config{Client: client, Buffer: 2, Logger: logger})
	slow := subscribe(t, f, "acme")
	for i := range 5 {
		enqueue(t, client, "acme", string(rune('a'+i)), 0)
	}
	// Read nothing until the feed has dropped the subscriber: a reader as
	// quick as the feed would never fall behind.
	select {
	case <-dropped:
	case <-time.After(waitFor):
		t.Fatal("slow subscriber never dropped")
	}
	n := 0
	for range slow.C {
		n++
	}
	if n > 2 {
		t.Errorf("read %d changes from a buffer of 2", n)
	}
	// The feed keeps serving others.
	fast := subscribe(t, f, "acme")
	if len(fast.Snapshot) != 5 {
		t.Errorf("new subscriber's snapshot has %d jobs, want 5", len(fast.Snapshot))
	}
}

// onMessage is a slog handler that signals on each record of one message.
type onMessage struct {
	msg string
	c   chan<- struct{}
}

func (h onMessage) Enabled(context.Context, slog.Level) bool { return true }
func (h onMessage) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		select {
		case h.c <- struct{}{}:
		default:
		}
	}
	return nil
}
func (h onMessage) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h onMessage) WithGroup(string) slog.Handler      { return h }

func TestFeed_RunEndsSubscriptions(t *testing.T) {
	verifyNoLeaks(t)
	client := newSQLiteClient(t)
	f := feed.New(feed.Config{Client: client, Queue: testQueue})
	done := make(chan error, 1)
	runCtx, stop := context.WithCancel(t.Context())
	defer stop()
	go func() { done <- f.Run(runCtx) }()
	sub := subscribe(t, f, "acme")
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, ok := <-sub.C; ok {
		t.Error("subscription open after Run returned")
	}
	sub.Close() // a second close is harmless
	if _, err := f.Subscribe(t.Context(), "acme"); !errors.Is(err, feed.ErrClosed) {
		t.Errorf("Subscribe after Run = %v, want ErrClosed", err)
	}
}

// TestFeed_RetryThroughScheduled: a failed attempt is shown scheduled (with
// the pending jobs ahead of it), then, once maintenance makes it due,
// running and completed.
func TestFeed_RetryThroughScheduled(t *testing.T) {
	verifyNoLeaks(t)
	client := newSQLiteClient(t)
	f := runFeed(t, feed.Config{Client: client, PollInterval: 50 * time.Millisecond})
	sub := subscribe(t, f, "acme")
	var fail sync.Once
	h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
		failed := false
		fail.Do(func() { failed = true })
		if failed {
			return errors.New("transient")
		}
		return task.Progress(ctx, "analyzing", 90, "")
	})
	w, err := queue.NewWorker(client, queue.WorkerConfig{
		Queues:        map[string]queue.QueueConfig{testQueue: {MaxWorkers: 1}},
		Handlers:      map[string]queue.HandlerConfig{testKind: {Handler: h}},
		PollInterval:  20 * time.Millisecond,
		ShutdownGrace: 10 * time.Millisecond,
		Backoff:       func(int) time.Duration { return 300 * time.Millisecond },
		Maintenance:   queue.MaintenanceConfig{ScheduleInterval: 20 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	goRun(t, w.Run)
	j := enqueue(t, client, "acme", "j", 0)
	next(t, sub, "acme", is(j.ID, queue.StateRunning, "", -1))
	c := next(t, sub, "acme", is(j.ID, queue.StateScheduled, "", -1))
	if c.Position != 0 || c.Job.ErrorMessage != "transient" || c.Job.Attempt != 1 {
		t.Errorf("scheduled retry: position %d, error %q, attempt %d", c.Position, c.Job.ErrorMessage, c.Job.Attempt)
	}
	next(t, sub, "acme", is(j.ID, queue.StateCompleted, "", 100))
}
