package queue_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// logRecords is a slog.Handler that keeps every record's level and message.
type logRecords struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *logRecords) Enabled(context.Context, slog.Level) bool { return true }

func (h *logRecords) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r)
	return nil
}

func (h *logRecords) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logRecords) WithGroup(string) slog.Handler      { return h }

// find returns the level of the first record whose message starts with
// prefix and ends with suffix.
func (h *logRecords) find(prefix, suffix string) (slog.Level, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.recs {
		if strings.HasPrefix(r.Message, prefix) && strings.HasSuffix(r.Message, suffix) {
			return r.Level, true
		}
	}
	return 0, false
}

// all returns every record as "LEVEL message".
func (h *logRecords) all() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.recs {
		out = append(out, r.Level.String()+" "+r.Message)
	}
	return out
}

// logOnFailure logs every record when the test fails.
func (h *logRecords) logOnFailure(t *testing.T) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the worker logged %q", h.all())
		}
	})
}

// warnings returns the messages about jobs logged at WARN or above: not the
// maintenance leader's (a renewal of its lease that a loaded machine delays
// past its hold is warned of, whatever the jobs do).
func (h *logRecords) warnings() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.recs {
		if r.Level >= slog.LevelWarn && !strings.HasPrefix(r.Message, "maintenance ") {
			out = append(out, r.Message)
		}
	}
	return out
}

// blocking is a handler that reports its start and returns when its
// context ends.
func blocking(started chan<- int64) queue.Handler {
	return queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
		started <- task.Job.ID
		<-ctx.Done()
		return ctx.Err()
	})
}

// A client's cancel of a running job stops its handler and is logged at
// INFO as a cancel ("job cancelled; …"), with nothing at WARN: it is not a
// lost lease. The heartbeat is far off, so the cancel is what stops it.
// On PostgreSQL the cancel's notification may come before the in-process
// event, and it says "job cancelled or discarded".
func TestWorker_CancelLoggedAsCancel(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		started := make(chan int64, 1)
		logs := &logRecords{}
		logs.logOnFailure(t)
		cfg := fastConfig(map[string]queue.HandlerConfig{"block": {Handler: blocking(started)}}, 1)
		cfg.LeaseDuration, cfg.HeartbeatInterval = 3*time.Minute, time.Minute
		cfg.Logger = slog.New(logs)
		startWorker(t, c, cfg)

		j := enqueue(t, c, &queue.EnqueueParams{Kind: "block", TenantID: "t"})
		waitStarted(t, started, j.ID)
		if _, err := c.Cancel(context.Background(), j.ID, "t"); err != nil {
			t.Fatalf("Cancel: %v", err)
		}
		waitFor(t, 10*time.Second, "the cancel's result dropped", func() bool {
			_, ok := logs.find("job cancelled", "; result dropped")
			return ok
		})
		for _, end := range []string{"; cancelling handler", "; result dropped"} {
			if level, ok := logs.find("job cancelled", end); !ok || level != slog.LevelInfo {
				t.Errorf(`"job cancelled…%s" logged %v at %v, want at INFO`, end, ok, level)
			}
		}
		if w := logs.warnings(); len(w) > 0 {
			t.Errorf("a cancel logged warnings %q", w)
		}
	})
}

// lostLeases is an executor whose heartbeats hold no lease: the store says
// every lease is gone, as it does after a rescue or a takeover.
type lostLeases struct{ driver.Executor }

func (lostLeases) JobHeartbeat(context.Context, *driver.JobHeartbeatParams) ([]driver.Lease, error) {
	return nil, nil
}

// A lease the store no longer holds, with no cancel behind it, is still a
// lost lease, logged at WARN.
func TestWorker_LeaseLostLoggedAsWarning(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(&execDriver{Driver: s.driver, exec: lostLeases{s.driver.Executor()}}, queue.ClientConfig{})
		started := make(chan int64, 1)
		logs := &logRecords{}
		logs.logOnFailure(t)
		cfg := fastConfig(map[string]queue.HandlerConfig{"block": {Handler: blocking(started)}}, 1)
		cfg.HeartbeatInterval = 50 * time.Millisecond
		cfg.Logger = slog.New(logs)
		startWorker(t, c, cfg)

		j := enqueue(t, c, &queue.EnqueueParams{Kind: "block", TenantID: "t"})
		waitStarted(t, started, j.ID)
		waitFor(t, 10*time.Second, "the lost lease's result dropped", func() bool {
			_, ok := logs.find("lease lost; result dropped", "")
			return ok
		})
		if level, _ := logs.find("lease lost; cancelling handler", ""); level != slog.LevelWarn {
			t.Errorf("lease lost logged at %v, want WARN", level)
		}
		for _, w := range logs.warnings() {
			if strings.Contains(w, "cancelled") {
				t.Errorf("a lost lease logged as a cancel: %q", w)
			}
		}
	})
}
