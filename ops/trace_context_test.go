package ops_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/docketq/docket/ops"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/sqlite"
)

// TestTraceContext_RequestToJob: a request carrying a W3C traceparent runs
// in a server span that is the caller's child (TraceHTTP); a job it
// enqueues through a client whose Metadata is TraceMetadata stores that
// span's context; the job's attempt span is the request span's child, in
// the caller's trace. A job enqueued outside any trace has no metadata and
// its attempt starts a trace of its own.
func TestTraceContext_RequestToJob(t *testing.T) {
	t.Parallel()
	d, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	c := queue.NewClient(d, queue.ClientConfig{Metadata: ops.TraceMetadata})
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })

	api := ops.TraceHTTP(tp, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := c.Enqueue(r.Context(), &queue.EnqueueParams{Kind: "traced", TenantID: "acme",
			Metadata: map[string]string{"request_id": "r-1"}}); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	const (
		callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
		callerSpan  = "00f067aa0ba902b7"
	)
	req := httptest.NewRequest(http.MethodPost, "/v1/documents", nil)
	req.Header.Set("traceparent", "00-"+callerTrace+"-"+callerSpan+"-01")
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("request: %d %s", rec.Code, rec.Body)
	}
	if _, err := c.Enqueue(t.Context(), &queue.EnqueueParams{Kind: "traced", TenantID: "globex"}); err != nil {
		t.Fatal(err)
	}
	jobs, err := c.List(t.Context(), &queue.JobListParams{})
	if err != nil || len(jobs) != 2 {
		t.Fatalf("jobs: %d, %v", len(jobs), err)
	}
	traced, untraced := jobs[0], jobs[1]
	if traced.TenantID != "acme" {
		traced, untraced = untraced, traced
	}
	if traced.Metadata["traceparent"] == "" || traced.Metadata["request_id"] != "r-1" {
		t.Fatalf("traced job's metadata %q: want a traceparent and the caller's own pair", traced.Metadata)
	}
	if untraced.Metadata != nil {
		t.Fatalf("job enqueued outside a trace has metadata %q", untraced.Metadata)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w, err := queue.NewWorker(c, queue.WorkerConfig{
		Handlers: map[string]queue.HandlerConfig{"traced": {Handler: ops.Traced(tp, queue.HandlerFunc(
			func(context.Context, *queue.Task) error { return nil }))}},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	eventually(t, "three spans exported", func() bool { return len(exp.GetSpans()) == 3 })
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("worker: %v", err)
	}

	var server, jobSpan, rootJob tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		switch {
		case s.SpanKind == trace.SpanKindServer:
			server = s
		case s.Parent.IsValid():
			jobSpan = s
		default:
			rootJob = s
		}
	}
	if server.Name != "HTTP POST" || server.SpanContext.TraceID().String() != callerTrace ||
		server.Parent.SpanID().String() != callerSpan || !server.Parent.IsRemote() {
		t.Errorf("server span %q trace %s parent %s: want HTTP POST in the caller's trace %s under its span %s",
			server.Name, server.SpanContext.TraceID(), server.Parent.SpanID(), callerTrace, callerSpan)
	}
	if jobSpan.Name != "job traced" || jobSpan.SpanContext.TraceID().String() != callerTrace ||
		jobSpan.Parent.SpanID() != server.SpanContext.SpanID() {
		t.Errorf("traced job's span %q trace %s parent %s: want a child of the request span %s in trace %s",
			jobSpan.Name, jobSpan.SpanContext.TraceID(), jobSpan.Parent.SpanID(), server.SpanContext.SpanID(), callerTrace)
	}
	if rootJob.Name != "job traced" || rootJob.SpanContext.TraceID().String() == callerTrace {
		t.Errorf("untraced job's span %q in trace %s: want a trace of its own", rootJob.Name, rootJob.SpanContext.TraceID())
	}
}
