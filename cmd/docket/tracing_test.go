package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is an OTLP/HTTP trace receiver that keeps the spans it gets.
type collector struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	var req coltrace.ExportTraceServiceRequest
	if err != nil || r.URL.Path != "/v1/traces" || proto.Unmarshal(raw, &req) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			c.spans = append(c.spans, ss.GetSpans()...)
		}
	}
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	b, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	_, _ = w.Write(b)
}

func (c *collector) got() []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*tracepb.Span(nil), c.spans...)
}

// docket serve --otlp-endpoint exports a span per job attempt, with the
// job's id, kind and tenant and the attempt, to an OTLP/HTTP collector, in
// the trace of the upload request that enqueued the job.
func TestServe_OTLPSpans(t *testing.T) {
	t.Parallel()
	col := &collector{}
	hs := httptest.NewServer(col)
	defer hs.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--otlp-endpoint", hs.URL},
			env(map[string]string{"DOCKET_DATA_DIR": t.TempDir()}), &stdout, &stderr)
	}()
	srv := readBanner(t, stdout.String, stderr.String)
	job := upload(t, srv, "traced.txt", []byte("A document whose processing is traced."))
	final := waitJob(t, srv, job, "completed", 60*time.Second)
	cancel() // the shutdown flushes the batched spans
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	// One span per attempt, the child of the upload request's server span
	// (the request's trace continues into the job), besides the spans of
	// the requests (the upload and the polls).
	var jobs, uploads []*tracepb.Span
	for _, sp := range col.got() {
		switch {
		case sp.GetKind() == tracepb.Span_SPAN_KIND_CONSUMER:
			jobs = append(jobs, sp)
		case sp.GetName() == "HTTP POST":
			uploads = append(uploads, sp)
		}
	}
	if len(jobs) != 1 || len(uploads) != 1 {
		t.Fatalf("collector got %d job spans and %d upload request spans, want one of each", len(jobs), len(uploads))
	}
	if !bytes.Equal(jobs[0].GetTraceId(), uploads[0].GetTraceId()) || !bytes.Equal(jobs[0].GetParentSpanId(), uploads[0].GetSpanId()) {
		t.Errorf("job span in trace %x under %x, want the upload request's trace %x under its span %x",
			jobs[0].GetTraceId(), jobs[0].GetParentSpanId(), uploads[0].GetTraceId(), uploads[0].GetSpanId())
	}
	spans := jobs
	attrs := map[string]*tracepbValue{}
	for _, kv := range spans[0].GetAttributes() {
		attrs[kv.GetKey()] = &tracepbValue{s: kv.GetValue().GetStringValue(), i: kv.GetValue().GetIntValue()}
	}
	if spans[0].GetName() != "job process_document" || spans[0].GetKind() != tracepb.Span_SPAN_KIND_CONSUMER {
		t.Errorf("span %q (%v), want job process_document (consumer)", spans[0].GetName(), spans[0].GetKind())
	}
	if a := attrs["docket.job.id"]; a == nil || strconv.FormatInt(a.i, 10) != job {
		t.Errorf("docket.job.id = %+v, want %s", a, job)
	}
	if a := attrs["docket.tenant.id"]; a == nil || a.s != final["tenant_id"] {
		t.Errorf("docket.tenant.id = %+v, want %v", a, final["tenant_id"])
	}
	if a := attrs["docket.job.attempt"]; a == nil || a.i != 1 {
		t.Errorf("docket.job.attempt = %+v, want 1", a)
	}
}

type tracepbValue struct {
	s string
	i int64
}
