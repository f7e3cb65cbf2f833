package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the API's Prometheus metrics, registered on Config.Metrics.
// The API serves none of them: the ops listener does (package ops), so
// /metrics is never public by accident.
type metrics struct {
	requests *prometheus.CounterVec   // route, status
	duration *prometheus.HistogramVec // route
	limited  *prometheus.CounterVec   // route
}

// newMetrics registers the API's metrics on reg (a registry of its own
// when nil, which nobody scrapes). ss feeds the SSE clients gauge.
func newMetrics(reg prometheus.Registerer, ss *streams) (*metrics, error) {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docket_http_requests_total", Help: "HTTP requests by route and status.",
		}, []string{"route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "docket_http_request_duration_seconds", Help: "Time to serve a request, by route (event streams: their whole life).",
			Buckets: prometheus.DefBuckets,
		}, []string{"route"}),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docket_http_rate_limited_total",
			Help: "Requests refused with 429 by route: upload rate limit, event-stream and search caps, failed-authentication throttle.",
		}, []string{"route"}),
	}
	sse := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "docket_sse_clients", Help: "Open GET /v1/events streams.",
	}, func() float64 { return float64(ss.count()) })
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.limited, sse} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) observe(route string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(route).Observe(d.Seconds())
	if status == http.StatusTooManyRequests {
		m.limited.WithLabelValues(route).Inc()
	}
}
