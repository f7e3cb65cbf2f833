package ops

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/docketq/docket/queue"
)

// tracerName is the instrumentation scope of the job spans.
const tracerName = "github.com/docketq/docket/ops"

// Span attributes of a job attempt.
const (
	AttrJobID   = attribute.Key("docket.job.id")
	AttrKind    = attribute.Key("docket.job.kind")
	AttrQueue   = attribute.Key("docket.job.queue")
	AttrTenant  = attribute.Key("docket.tenant.id")
	AttrAttempt = attribute.Key("docket.job.attempt")
)

// propagator carries trace context in W3C Trace Context form (traceparent,
// tracestate): in HTTP headers and in a job's metadata.
var propagator = propagation.TraceContext{}

// TraceMetadata returns the trace context of ctx as job metadata
// (traceparent, tracestate), or nil when ctx carries no valid span. Set it
// as queue.ClientConfig.Metadata, and every job enqueued in a traced
// request carries that request's trace into its attempts (Traced).
func TraceMetadata(ctx context.Context) map[string]string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	m := propagation.MapCarrier{}
	propagator.Inject(ctx, m)
	return m
}

// Traced wraps h so that each attempt runs in a span of its own, named
// "job <kind>" (a consumer span), with the job's id, kind, queue, tenant and
// attempt; the handler's context carries the span, so the handler's own
// spans are its children. When the job's metadata carry a trace context
// (TraceMetadata at enqueue), the span is a child of the enqueuing span:
// one trace shows the request and every attempt of the job it enqueued.
// An error marks the span failed and is recorded on it. tp nil: otel's
// global provider is read at each attempt.
func Traced(tp trace.TracerProvider, h queue.Handler) queue.Handler {
	return queue.HandlerFunc(func(ctx context.Context, t *queue.Task) error {
		j := t.Job
		if len(j.Metadata) > 0 {
			ctx = propagator.Extract(ctx, propagation.MapCarrier(j.Metadata))
		}
		ctx, span := tracer(tp).Start(ctx, "job "+j.Kind, trace.WithSpanKind(trace.SpanKindConsumer),
			trace.WithAttributes(AttrJobID.Int64(j.ID), AttrKind.String(j.Kind), AttrQueue.String(j.Queue),
				AttrTenant.String(j.TenantID), AttrAttempt.Int(j.Attempt)))
		defer span.End()
		err := h.Work(ctx, t)
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		return err
	})
}

func tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return otel.GetTracerProvider().Tracer(tracerName)
	}
	return tp.Tracer(tracerName)
}

// TraceHTTP wraps h so that each request runs in a server span named
// "HTTP <method>", a child of the caller's span when the request carries a
// W3C traceparent header; handlers see the span in the request's context
// (and, with TraceMetadata, pass it on to the jobs they enqueue). The span
// records the status code; 5xx marks it failed. tp nil: otel's global
// provider is read at each request.
func TraceHTTP(tp trace.TracerProvider, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := tracer(tp).Start(ctx, "HTTP "+r.Method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path)))
		defer span.End()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(sw, r.WithContext(ctx))
		span.SetAttributes(attribute.Int("http.response.status_code", sw.code))
		if sw.code >= 500 {
			span.SetStatus(codes.Error, http.StatusText(sw.code))
		}
	})
}

// statusWriter records the status code written through it. Unwrap lets
// http.ResponseController reach the underlying writer (flushes of event
// streams, deadlines).
type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.code, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
