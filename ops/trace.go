package ops

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
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

// Traced wraps h so that each attempt runs in a span of its own, named
// "job <kind>" (a consumer span), with the job's id, kind, queue, tenant and
// attempt; the handler's context carries the span, so the handler's own
// spans are its children. An error marks the span failed and is recorded
// on it. tp nil: otel's global provider is read at each attempt.
func Traced(tp trace.TracerProvider, h queue.Handler) queue.Handler {
	return queue.HandlerFunc(func(ctx context.Context, t *queue.Task) error {
		j := t.Job
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
