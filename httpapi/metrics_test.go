package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/docketq/docket/httpapi"
)

// scrapeRegistry serves reg as the ops listener does and parses a scrape
// with the Prometheus text parser.
func scrapeRegistry(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), "GET", "/metrics", nil))
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse metrics: %v", err)
	}
	return fams
}

// sample returns the value of a counter or gauge series with labels.
func sample(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
next:
	for _, m := range fams[name].GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		for _, l := range m.GetLabel() {
			if labels[l.GetName()] != l.GetValue() {
				continue next
			}
		}
		if m.Counter != nil {
			return m.GetCounter().GetValue()
		}
		return m.GetGauge().GetValue()
	}
	return -1
}

// TestMetrics_API: the API's metrics go to Config.Metrics (requests by
// route and status, 429s by route, open event streams), and the API does
// not serve /metrics itself.
// Not parallel: newSSEEnvConfig checks for leaked goroutines, which would
// count those of tests running beside it (CI failed so once).
func TestMetrics_API(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newSSEEnvConfig(t, func(c *httpapi.Config) { c.Metrics, c.MaxStreamsPerKey = reg, 1 })
	a := e.tenant("a")
	got, _, closeFirst := openEvents(t, e.url, a.key)
	if got != http.StatusOK {
		t.Fatalf("first stream: %d", got)
	}
	_, _, closeIt := openEvents(t, e.url, a.key) // over the cap: 429
	closeIt()
	fams := scrapeRegistry(t, reg)
	if got := sample(fams, "docket_sse_clients", nil); got != 1 {
		t.Errorf("docket_sse_clients = %v, want 1", got)
	}
	route := map[string]string{"route": "GET /v1/events"}
	if got := sample(fams, "docket_http_rate_limited_total", route); got != 1 {
		t.Errorf("docket_http_rate_limited_total%v = %v, want 1", route, got)
	}
	if got := sample(fams, "docket_http_requests_total", map[string]string{"route": "GET /v1/events", "status": "429"}); got != 1 {
		t.Errorf("requests of GET /v1/events with 429 = %v, want 1", got)
	}
	if fams["docket_http_request_duration_seconds"] == nil {
		t.Error("docket_http_request_duration_seconds missing")
	}

	req, err := http.NewRequestWithContext(t.Context(), "GET", e.url+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics on the API: %d, want 404 (metrics are the ops listener's)", res.StatusCode)
	}
	closeFirst()
	deadline := time.Now().Add(10 * time.Second)
	for sample(scrapeRegistry(t, reg), "docket_sse_clients", nil) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("docket_sse_clients stayed above 0 after the streams closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
