package feed_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/docketq/docket/feed"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/sqlite"
)

const (
	testQueue = "documents"
	testKind  = "process_document"
	waitFor   = 10 * time.Second
)

// verifyNoLeaks fails t if goroutines started during the test outlive it.
// Call it first, so its check runs after every other cleanup.
func verifyNoLeaks(t *testing.T) {
	t.Helper()
	opts := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opts) })
}

// newSQLiteClient returns a client on a fresh, migrated SQLite database.
func newSQLiteClient(t testing.TB) *queue.Client {
	t.Helper()
	d, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return queue.NewClient(d, queue.ClientConfig{})
}

// runFeed starts a feed on client and stops it (joining it) in cleanup.
func runFeed(t testing.TB, cfg feed.Config) *feed.Feed {
	t.Helper()
	if cfg.Queue == "" {
		cfg.Queue = testQueue
	}
	f := feed.New(cfg)
	goRun(t, f.Run)
	return f
}

// goRun runs fn until the test ends, then cancels it and waits for it.
func goRun(t testing.TB, fn func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
}

// script is a document handler whose steps the test releases one by one:
// downloading 5%, parsing 30%, parsing 50%, then completion. Each job waits
// on the gate named by its args' "name".
type script struct {
	mu    sync.Mutex
	gates map[string]chan struct{}
}

func newScript() *script { return &script{gates: make(map[string]chan struct{})} }

func (s *script) gate(name string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gates[name]
	if g == nil {
		g = make(chan struct{})
		s.gates[name] = g
	}
	return g
}

// step lets the job named name take its next step.
func (s *script) step(t *testing.T, name string) {
	t.Helper()
	select {
	case s.gate(name) <- struct{}{}:
	case <-time.After(waitFor):
		t.Fatalf("job %s never waited for a step", name)
	}
}

func (s *script) Work(ctx context.Context, task *queue.Task) error {
	var a struct{ Name string }
	if err := json.Unmarshal(task.Job.Args, &a); err != nil {
		return queue.Permanent(err)
	}
	g := s.gate(a.Name)
	steps := []struct {
		stage   string
		percent int
	}{{"downloading", 5}, {"parsing", 30}, {"parsing", 50}}
	for _, st := range steps {
		if err := task.Progress(ctx, st.stage, st.percent, ""); err != nil {
			return err
		}
		select {
		case <-g:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// runWorker starts a worker of the test queue on client with h.
func runWorker(t testing.TB, client *queue.Client, h queue.Handler) {
	t.Helper()
	w, err := queue.NewWorker(client, queue.WorkerConfig{
		Queues:        map[string]queue.QueueConfig{testQueue: {MaxWorkers: 4}},
		Handlers:      map[string]queue.HandlerConfig{testKind: {Handler: h}},
		PollInterval:  50 * time.Millisecond,
		ShutdownGrace: 10 * time.Millisecond,
		Maintenance:   queue.MaintenanceConfig{Disabled: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	goRun(t, w.Run)
}

// enqueue adds a document job named name for tenant.
func enqueue(t testing.TB, client *queue.Client, tenant, name string, priority int) *queue.Job {
	t.Helper()
	res, err := client.Enqueue(t.Context(), &queue.EnqueueParams{
		Queue: testQueue, Kind: testKind, TenantID: tenant, Priority: priority,
		Args: map[string]string{"name": name},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res.Job
}

// subscribe subscribes to tenant's changes until the test ends.
func subscribe(t testing.TB, f *feed.Feed, tenant string) *feed.Subscription {
	t.Helper()
	s, err := f.Subscribe(t.Context(), tenant)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// next returns the first change of s that matches, failing t after waitFor
// or when s closes. Every change read must belong to tenant.
func next(t *testing.T, s *feed.Subscription, tenant string, match func(feed.Change) bool) feed.Change {
	t.Helper()
	deadline := time.After(waitFor)
	for {
		select {
		case c, ok := <-s.C:
			if !ok {
				t.Fatal("subscription closed")
			}
			if c.Job.TenantID != tenant {
				t.Fatalf("tenant %s got a change of tenant %s's job", tenant, c.Job.TenantID)
			}

			if match(c) {
				return c
			}
		case <-deadline:
			t.Fatal("no matching change")
		}
	}
}

// is matches a change of job id in state, stage and percent (stage ""
// and percent -1: any).
func is(id int64, state queue.State, stage string, percent int) func(feed.Change) bool {
	return func(c feed.Change) bool {
		j := c.Job
		return j.ID == id && j.State == state && (stage == "" || j.Stage == stage) && (percent < 0 || j.Progress == percent)
	}
}

// at matches a change of job id at position pos.
func at(id int64, state queue.State, pos int) func(feed.Change) bool {
	return func(c feed.Change) bool { return c.Job.ID == id && c.Job.State == state && c.Position == pos }
}

// expect reads changes of s until each matcher has matched one, in any
// order.
func expect(t *testing.T, s *feed.Subscription, tenant string, matchers ...func(feed.Change) bool) {
	t.Helper()
	left := slices.Clone(matchers)
	next(t, s, tenant, func(c feed.Change) bool {
		for i, m := range left {
			if m(c) {
				left = slices.Delete(left, i, i+1)
				break
			}
		}
		return len(left) == 0
	})
}
