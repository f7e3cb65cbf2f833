package main

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// checkOTLPEndpoint checks --otlp-endpoint: empty, or an http(s) URL.
func checkOTLPEndpoint(endpoint string) error {
	if endpoint == "" {
		return nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--otlp-endpoint %q: want an http(s) URL such as http://127.0.0.1:4318", redact(endpoint))
	}
	return nil
}

// tracerProvider returns the provider of job spans, exporting them by
// OTLP/HTTP to endpoint (its /v1/traces), and the function that flushes and
// stops it. With no endpoint it returns nil (otel's global provider, a
// no-op unless set) and a no-op.
func tracerProvider(ctx context.Context, endpoint string) (trace.TracerProvider, func(), error) {
	if endpoint == "" {
		return nil, func() {}, nil
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, nil, fmt.Errorf("--otlp-endpoint: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "docket"))))
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tp.Shutdown(ctx) // flushes the spans still batched
	}
	return tp, stop, nil
}
