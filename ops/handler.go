package ops

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// readyTimeout bounds the readiness check.
const readyTimeout = 2 * time.Second

// Defaults of the ops listener's connection caps (cmd/docket's
// --ops-max-conns and --ops-max-conns-per-addr): a few scrapers and
// probes, never the API's crowd.
const (
	DefaultMaxConns        = 64
	DefaultMaxConnsPerAddr = 16
)

// HandlerConfig configures the ops listener's handler.
type HandlerConfig struct {
	// Gatherer is what /metrics serves. Required.
	Gatherer prometheus.Gatherer
	// Ready answers /readyz: nil error means ready. Nil: always ready.
	Ready func(ctx context.Context) error
}

// Handler serves the ops listener: GET /metrics (Prometheus text or
// OpenMetrics), GET /healthz (the process runs) and GET /readyz (Ready
// answered within 2 s: 200, else 503). No route reads a request body: a
// request that announces one is answered at once and its connection
// closed, so that the server does not wait for the body.
func Handler(cfg HandlerConfig) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(cfg.Gatherer, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeStatus(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if cfg.Ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
			defer cancel()
			if err := cfg.Ready(ctx); err != nil {
				writeStatus(w, http.StatusServiceUnavailable, "unavailable")
				return
			}
		}
		writeStatus(w, http.StatusOK, "ready")
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			w.Header().Set("Connection", "close")
			_ = http.NewResponseController(w).SetReadDeadline(time.Now())
		}
		mux.ServeHTTP(w, r)
	})
}

func writeStatus(w http.ResponseWriter, code int, status string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"status": status})
}
