package ops_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/docketq/docket/ops"
	"github.com/docketq/docket/queue"
)

// TestTraced: every attempt of a job is a span, exported to an in-memory
// exporter, with the job's id, kind, queue, tenant and attempt; the
// handler's context carries it; a failed attempt's span says so.
func TestTraced(t *testing.T) {
	t.Parallel()
	_, c := setup(t)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })

	inSpan := make(chan bool, 2)
	h := ops.Traced(tp, queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
		inSpan <- trace.SpanFromContext(ctx).SpanContext().IsValid()
		if task.Job.Attempt == 1 {
			return errors.New("first attempt fails")
		}
		return nil
	}))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w, err := queue.NewWorker(c, queue.WorkerConfig{
		Queues:   map[string]queue.QueueConfig{"q": {MaxWorkers: 1}},
		Handlers: map[string]queue.HandlerConfig{"traced": {Handler: h, Backoff: func(int) time.Duration { return 0 }}},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	res, err := c.Enqueue(ctx, &queue.EnqueueParams{Queue: "q", Kind: "traced", TenantID: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "two attempts exported", func() bool { return len(exp.GetSpans()) == 2 })
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("worker: %v", err)
	}
	for range 2 {
		if !<-inSpan {
			t.Error("the handler's context carries no span")
		}
	}
	for i, s := range exp.GetSpans() {
		attempt := i + 1
		attrs := map[attribute.Key]attribute.Value{}
		for _, kv := range s.Attributes {
			attrs[kv.Key] = kv.Value
		}
		if s.Name != "job traced" || s.SpanKind != trace.SpanKindConsumer ||
			attrs[ops.AttrJobID].AsInt64() != res.Job.ID || attrs[ops.AttrKind].AsString() != "traced" ||
			attrs[ops.AttrQueue].AsString() != "q" || attrs[ops.AttrTenant].AsString() != "acme" ||
			attrs[ops.AttrAttempt].AsInt64() != int64(attempt) {
			t.Errorf("span %d: %s (%v) %v, want job traced, consumer, job %d, tenant acme, attempt %d", i, s.Name, s.SpanKind, attrs, res.Job.ID, attempt)
		}
		wantCode := codes.Ok
		if attempt == 1 {
			wantCode = codes.Error
		}
		if (s.Status.Code == codes.Error) != (wantCode == codes.Error) {
			t.Errorf("span of attempt %d: status %v, want %v", attempt, s.Status.Code, wantCode)
		}
	}
}
