package queue_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// gateLog lets a test act when the worker logs a message: on a message
// starting with on, it calls fn (synchronously, in the logging goroutine).
type gateLog struct {
	mu  sync.Mutex
	fns map[string]func()
}

func (g *gateLog) Enabled(context.Context, slog.Level) bool { return true }
func (g *gateLog) WithAttrs([]slog.Attr) slog.Handler       { return g }
func (g *gateLog) WithGroup(string) slog.Handler            { return g }
func (g *gateLog) Handle(_ context.Context, r slog.Record) error {
	g.mu.Lock()
	var fn func()
	for prefix, f := range g.fns {
		if strings.HasPrefix(r.Message, prefix) {
			fn = f
		}
	}
	g.mu.Unlock()
	if fn != nil {
		fn()
	}
	return nil
}

// RunOne's awaitOne decided "abandoned" with a non-blocking look at done
// (w.jobs.Wait) right after releaseAbandoned and awaitHandOffs. A handler
// that returns as the heartbeat interval runs out — after settleRest
// settled its attempt, so handlerReturned reports false and nothing is
// handed on — has returned, but its goroutine may not have finished
// (here it is still logging; in general it is merely not scheduled yet):
// the select took default, and the worker was declared abandoned for good
// — every later RunOne and Run refused — although no handler ran. Now a
// worker whose handler no longer holds a slot waits for its goroutine.
func TestWorker_RunOneReturnedHandlerNotAbandoned(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		started, ret := make(chan struct{}), make(chan struct{})
		h := queue.HandlerFunc(func(context.Context, *queue.Task) error {
			close(started)
			<-ret // ignores its context until the release is decided
			return nil
		})
		dropped := make(chan struct{})
		g := &gateLog{fns: map[string]func(){
			"handler ignored cancellation": func() { // releaseAbandoned, after settleRest
				close(ret)
				<-dropped // the handler has returned
			},
			"handler returned after its job was released": func() {
				close(dropped)
				time.Sleep(50 * time.Millisecond) // the handler's goroutine, after the handler returned, not done yet
			},
		}}
		cfg := fastConfig(map[string]queue.HandlerConfig{"k": {Handler: h}}, 1)
		cfg.HeartbeatInterval = 200 * time.Millisecond
		cfg.Logger = slog.New(g)
		w, err := queue.NewWorker(c, cfg)
		if err != nil {
			t.Fatal(err)
		}
		enqueue(t, c, &queue.EnqueueParams{Kind: "k", TenantID: "acme"})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-started; cancel() }()
		if _, err := w.RunOne(ctx, queue.DefaultQueue); !errors.Is(err, context.Canceled) {
			t.Fatalf("RunOne: %v, want context.Canceled", err)
		}
		time.Sleep(100 * time.Millisecond) // long returned
		if _, err := w.RunOne(context.Background(), queue.DefaultQueue); err != nil {
			t.Errorf("RunOne after the handler returned: %v; want the worker usable (its handler returned)", err)
		}
	})
}
