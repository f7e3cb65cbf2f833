package ops_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/docketq/docket/internal/storepair"
	"github.com/docketq/docket/ops"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/sqlite"
)

// setup opens a fresh SQLite store and a client on it.
func setup(t *testing.T) (*storepair.SQLite, *queue.Client) {
	t.Helper()
	dRaw, err := sqlite.Open(t.Context(), storepair.SQLitePath(t))
	if err != nil {
		t.Fatal(err)
	}
	d := storepair.NewSQLite(dRaw)
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return d, queue.NewClient(d, queue.ClientConfig{})
}

// scrape gets /metrics from h and parses it with the Prometheus text
// parser.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, err := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("GET /metrics: %d %s", res.StatusCode, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value returns the value of the series of family name with labels (a
// counter's, a gauge's, or a histogram's sample count), and whether it is
// there.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		for _, l := range m.GetLabel() {
			if labels[l.GetName()] != l.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// eventually polls cond until it holds or 10 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMetrics_Engine runs jobs through a worker with the metrics' hooks and
// checks every engine series a scrape shows, parsed.
func TestMetrics_Engine(t *testing.T) {
	t.Parallel()
	_, c := setup(t)
	m := ops.NewMetrics()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	watch := m.Watch(c.Bus())
	done := make(chan error, 2)
	go func() { done <- watch(ctx) }()

	for _, kind := range []string{"ok", "ok", "bad"} {
		if _, err := c.Enqueue(ctx, &queue.EnqueueParams{Queue: "q", Kind: kind, TenantID: kind + "-tenant"}); err != nil {
			t.Fatal(err)
		}
	}
	w, err := queue.NewWorker(c, queue.WorkerConfig{
		Queues: map[string]queue.QueueConfig{"q": {MaxWorkers: 2}},
		Handlers: map[string]queue.HandlerConfig{
			"ok":  {Handler: queue.HandlerFunc(func(context.Context, *queue.Task) error { return nil })},
			"bad": {Handler: queue.HandlerFunc(func(context.Context, *queue.Task) error { return &queue.PermanentError{Err: errors.New("unreadable")} })},
		},
		Hooks: m.Hooks(queue.Hooks{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	go func() { done <- w.Run(ctx) }()
	h := ops.Handler(ops.HandlerConfig{Gatherer: m.Registry()})
	ok := map[string]string{"queue": "q", "kind": "ok"}
	bad := map[string]string{"queue": "q", "kind": "bad"}
	var fams map[string]*dto.MetricFamily
	eventually(t, "three finished attempts", func() bool {
		fams = scrape(t, h)
		n, _ := value(fams, "docket_job_duration_seconds", ok)
		k, _ := value(fams, "docket_job_duration_seconds", bad)
		return n+k == 3
	})
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"docket_jobs_enqueued_total", ok, 2},
		{"docket_jobs_enqueued_total", bad, 1},
		{"docket_jobs_claimed_total", ok, 2},
		{"docket_jobs_claimed_total", bad, 1},
		{"docket_jobs_finished_total", map[string]string{"queue": "q", "kind": "ok", "outcome": "completed"}, 2},
		{"docket_jobs_finished_total", map[string]string{"queue": "q", "kind": "bad", "outcome": "failed"}, 1},
		{"docket_job_duration_seconds", ok, 2},
		{"docket_job_wait_seconds", ok, 2},
		{"docket_job_wait_seconds", bad, 1},
	} {
		if got, found := value(fams, c.name, c.labels); !found || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.name, c.labels, got, found, c.want)
		}
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if fams[name] == nil {
			t.Errorf("%s missing: the Go and process collectors are not registered", name)
		}
	}
	cancel()
	for range 2 {
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("run: %v", err)
		}
	}
}
