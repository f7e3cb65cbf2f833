package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// jsonEqual reports whether two JSON documents are the same value (a store
// may normalise the text, as jsonb does).
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// A partial result is stored and published at once, even right after a
// report of the same stage (which would be coalesced); a report without
// one keeps it, in the store and in the events; it is kept when the job
// completes.
func TestTask_ProgressPartial(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		events, unsubscribe := c.Bus().Subscribe(1024, nil)
		defer unsubscribe()
		first, second := json.RawMessage(`{"pages":2}`), json.RawMessage(`{"pages":2,"phrases":["storm damage"]}`)
		step := make(chan struct{})
		reported := make(chan struct{})
		h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			if err := task.Progress(ctx, "parsing", 10, ""); err != nil {
				return err
			}
			// Within the coalescing interval of the report above.
			if err := task.ProgressPartial(ctx, "parsing", 50, "parsed", first); err != nil {
				return err
			}
			reported <- struct{}{}
			<-step
			if err := task.Progress(ctx, "analyzing", 85, ""); err != nil {
				return err
			}
			if err := task.Progress(ctx, "analyzing", 86, "coalesced"); err != nil {
				return err
			}
			if err := task.ProgressPartial(ctx, "analyzing", 90, "analysed", second); err != nil {
				return err
			}
			reported <- struct{}{}
			<-step
			return nil
		})
		startWorker(t, c, fastConfig(map[string]queue.HandlerConfig{"doc": {Handler: h}}, 1))
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "doc", TenantID: "a"})

		for _, want := range []json.RawMessage{first, second} {
			<-reported
			// Written before ProgressPartial returned: no wait.
			got, err := c.Get(ctx, job.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != queue.StateRunning || !jsonEqual(got.PartialResult, want) {
				t.Fatalf("job %s with partial result %s, want running with %s", got.State, got.PartialResult, want)
			}
			step <- struct{}{}
		}
		done := waitState(t, c, job.ID, queue.StateCompleted, 5*time.Second)
		if !jsonEqual(done.PartialResult, second) {
			t.Errorf("completed job's partial result %s, want %s kept", done.PartialResult, second)
		}

		// Every progress event after the first partial result carries it.
		var carried []string
		for {
			var e queue.Event
			select {
			case e = <-events:
			case <-time.After(5 * time.Second):
				t.Fatalf("no completed event; progress events carried %q", carried)
			}
			if e.Job.ID != job.ID {
				continue
			}
			if e.Type == queue.EventCompleted {
				break
			}
			if e.Type == queue.EventProgress && e.Job.Progress >= 50 {
				carried = append(carried, e.Job.Stage+" "+string(e.Job.PartialResult))
				if e.Job.PartialResult == nil {
					t.Errorf("progress event %s %d%% without the partial result", e.Job.Stage, e.Job.Progress)
				}
			}
		}
		if len(carried) < 2 {
			t.Errorf("progress events with a partial result: %q, want both reports", carried)
		}
	})
}

// A partial result over the limit, or not JSON, is refused before anything
// is written.
func TestTask_ProgressPartialRefused(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		errs := make(chan error, 2)
		h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
			big := json.RawMessage(`"` + strings.Repeat("x", queue.MaxPartialResultBytes) + `"`)
			errs <- task.ProgressPartial(ctx, "parsing", 50, "big", big)
			errs <- task.ProgressPartial(ctx, "other", 60, "broken", json.RawMessage(`{"pages":`))
			return nil
		})
		startWorker(t, c, fastConfig(map[string]queue.HandlerConfig{"doc": {Handler: h}}, 1))
		job := enqueue(t, c, &queue.EnqueueParams{Kind: "doc", TenantID: "a"})
		for _, what := range []string{"over the limit", "not JSON"} {
			err := <-errs
			if !errors.Is(err, queue.ErrInvalid) {
				t.Errorf("partial result %s: %v, want ErrInvalid", what, err)
			}
			if what == "over the limit" && (err == nil || !strings.Contains(err.Error(), "16384-byte limit")) {
				t.Errorf("error %v does not name the limit", err)
			}
		}
		done := waitState(t, c, job.ID, queue.StateCompleted, 5*time.Second)
		if done.PartialResult != nil || done.Stage == "parsing" || done.Stage == "other" {
			t.Errorf("refused reports were written: stage %q, partial result %s", done.Stage, done.PartialResult)
		}
	})
}

// A partial result whose write failed is not lost: the attempt's end
// writes it, when the worker completes the job and when the handler
// completes it in its own transaction (CompleteTx).
func TestTask_ProgressPartialWrittenAtEnd(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		for _, inTx := range []bool{false, true} {
			name := map[bool]string{false: "Worker", true: "CompleteTx"}[inTx]
			t.Run(name, func(t *testing.T) {
				fd := newFaultDriver(s.driver)
				c := queue.NewClient(fd, queue.ClientConfig{})
				partial := json.RawMessage(`{"pages":7}`)
				h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
					fd.exec.refuseProgress.Store(true)
					err := task.ProgressPartial(ctx, "parsing", 50, "", partial)
					fd.exec.refuseProgress.Store(false)
					if !errors.Is(err, errRefused) {
						return queue.Permanent(errors.New("the refused write did not fail"))
					}
					if inTx {
						return s.completeWithEffect(ctx, task)
					}
					return nil
				})
				startWorker(t, c, fastConfig(map[string]queue.HandlerConfig{"doc" + name: {Handler: h}}, 1))
				job := enqueue(t, c, &queue.EnqueueParams{Kind: "doc" + name, TenantID: "a" + name})
				done := waitState(t, c, job.ID, queue.StateCompleted, 5*time.Second)
				if !jsonEqual(done.PartialResult, partial) {
					t.Errorf("completed job's partial result %s, want %s written at the end", done.PartialResult, partial)
				}
			})
		}
	})
}
