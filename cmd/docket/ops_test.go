package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

var opsLine = regexp.MustCompile(`(?m)^ops: (http://\S+)/metrics$`)

// opsBase waits for the ops line in out and returns the listener's base URL.
func opsBase(t *testing.T, out func() string, errOut func() string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m := opsLine.FindStringSubmatch(out()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ops line\nstdout:\n%s\nstderr:\n%s", out(), errOut())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// get fetches url and returns its status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// scrapeOps parses the ops listener's /metrics with the text parser.
func scrapeOps(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	status, body := get(t, base+"/metrics")
	if status != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", status, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// total sums the series of a family whose labels include want (counters
// and gauges; a histogram's sample counts).
func total(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	var sum float64
next:
	for _, m := range fams[name].GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum
}

// docket serve --ops-listen: the ops listener serves /healthz, /readyz and
// /metrics with the engine's, the API's and the store's series after a
// document is processed; the API's port serves no /metrics; with
// --log-format json each attempt is one JSON log line.
func TestServe_OpsListener(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--ops-listen", "127.0.0.1:0", "--metrics-interval", "1s", "--log-format", "json"},
			env(map[string]string{"DOCKET_DATA_DIR": t.TempDir()}), &stdout, &stderr)
	}()
	srv := readBanner(t, stdout.String, stderr.String)
	base := opsBase(t, stdout.String, stderr.String)
	for _, path := range []string{"/healthz", "/readyz"} {
		if status, body := get(t, base+path); status != http.StatusOK {
			t.Errorf("ops %s: %d %s", path, status, body)
		}
	}
	if status, _ := get(t, srv.base+"/metrics"); status != http.StatusNotFound {
		t.Errorf("GET /metrics on the API's port: %d, want 404", status)
	}
	job := upload(t, srv, "note.txt", []byte("Metrics for the operator.\n\nA short note, processed end to end."))
	waitJob(t, srv, job, "completed", 60*time.Second)

	completed := map[string]string{"queue": "documents", "outcome": "completed"}
	deadline := time.Now().Add(30 * time.Second)
	var fams map[string]*dto.MetricFamily
	for {
		fams = scrapeOps(t, base)
		if total(fams, "docket_jobs_finished_total", completed) == 1 && total(fams, "docket_store_up", nil) == 1 &&
			total(fams, "docket_db_pool_connections", map[string]string{"state": "max"}) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics never showed the completed job and a read of the store: finished %v, store up %v",
				total(fams, "docket_jobs_finished_total", completed), total(fams, "docket_store_up", nil))
		}
		time.Sleep(50 * time.Millisecond)
	}
	docs := map[string]string{"queue": "documents"}
	for _, c := range []struct {
		name string
		want float64
	}{
		{"docket_jobs_enqueued_total", 1},
		{"docket_jobs_claimed_total", 1},
		{"docket_job_duration_seconds", 1},
		{"docket_job_wait_seconds", 1},
	} {
		if got := total(fams, c.name, docs); got != c.want {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
	if got := total(fams, "docket_http_requests_total", map[string]string{"route": "POST /v1/documents", "status": "202"}); got != 1 {
		t.Errorf("uploads counted: %v, want 1", got)
	}
	for _, name := range []string{"docket_store_up", "docket_db_dead_tuples", "docket_db_pool_connections", "docket_sse_clients", "go_goroutines", "process_resident_memory_bytes"} {
		if fams[name] == nil {
			t.Errorf("%s missing from /metrics", name)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	wantAttemptLine(t, stderr.String())
}

// wantAttemptLine finds the JSON log line of a completed attempt.
func wantAttemptLine(t *testing.T, logs string) {
	t.Helper()
	for line := range strings.Lines(logs) {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec["msg"] == "attempt ended" && rec["outcome"] == "completed" && rec["kind"] != nil && rec["tenant_id"] != nil {
			return
		}
	}
	t.Errorf("no JSON line for the attempt in the logs:\n%s", logs)
}

// docket worker --ops-listen serves the ops listener too.
func TestWorker_OpsListener(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"worker", "--ops-listen", "127.0.0.1:0"},
			env(map[string]string{"DOCKET_DATA_DIR": t.TempDir()}), &stdout, &stderr)
	}()
	base := opsBase(t, stdout.String, stderr.String)
	if status, body := get(t, base+"/readyz"); status != http.StatusOK {
		t.Errorf("worker /readyz: %d %s", status, body)
	}
	deadline := time.Now().Add(30 * time.Second)
	for total(scrapeOps(t, base), "docket_store_up", nil) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("docket_store_up never 1 on the worker's ops listener")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("worker: %v", err)
	}
}
