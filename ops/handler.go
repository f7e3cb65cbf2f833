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

// HandlerConfig configures the ops listener's handler.
type HandlerConfig struct {
	// Gatherer is what /metrics serves. Required.
	Gatherer prometheus.Gatherer
	// Ready answers /readyz: nil error means ready. Nil: always ready.
	Ready func(ctx context.Context) error
}

// Handler serves the ops listener: GET /metrics (Prometheus text or
// OpenMetrics), GET /healthz (the process runs) and GET /readyz (Ready
// answered within 2 s: 200, else 503).
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
	return mux
}

func writeStatus(w http.ResponseWriter, code int, status string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"status": status})
}
