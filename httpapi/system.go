package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

// watchedQueue is the queue of document jobs that the admin and system
// routes report on.
const watchedQueue = docket.DocumentQueue

// readyTimeout bounds the store query behind GET /readyz.
const readyTimeout = 2 * time.Second

// systemRoutes serves health, readiness, metrics and the OpenAPI document.
func (s *Server) systemRoutes() []route {
	return []route{
		{"GET", "/healthz", public, s.handleHealthz},
		{"GET", "/readyz", public, s.handleReadyz},
		{"GET", "/metrics", public, s.handleMetrics},
		{"GET", "/v1/openapi.json", public, s.handleOpenAPI},
	}
}

// handleHealthz answers while the process runs: liveness only, no store.
func (s *Server) handleHealthz(w http.ResponseWriter, _ *http.Request) error {
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// handleReadyz answers 200 when the store answers a cheap query within
// readyTimeout, else 503.
func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.queueStats(r.Context()); err != nil {
		s.logger.Warn("readyz: store", "error", err)
		return errorf(http.StatusServiceUnavailable, "the store did not answer within %s", readyTimeout)
	}
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// queueStats reads the document queue's stats within readyTimeout.
func (s *Server) queueStats(ctx context.Context) (*queue.QueueStats, error) {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	return s.cfg.Queue.Stats(ctx, watchedQueue)
}

// handleMetrics writes the request counters and the queue's gauges in the
// Prometheus text format. A store that does not answer shows as
// docket_store_up 0, without the queue gauges.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) error {
	var buf bytes.Buffer
	if err := s.metrics.writeProm(&buf); err != nil {
		return err
	}
	st, err := s.queueStats(r.Context())
	if err != nil {
		s.logger.Warn("metrics: queue stats", "error", err)
	}
	writeQueueGauges(&buf, st)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("%w: %w", errResponseStarted, err)
	}
	return nil
}

// healthStates are the states reported by queue health, in their order of life.
var healthStates = []queue.State{
	queue.StateScheduled, queue.StatePending, queue.StateRunning,
	queue.StateCompleted, queue.StateFailed, queue.StateCancelled,
}

// writeQueueGauges writes the gauges of st (nil: the store is down).
func writeQueueGauges(w io.Writer, st *queue.QueueStats) {
	up := 0
	if st != nil {
		up = 1
	}
	promGauge(w, "docket_store_up", "Whether the store answered the metrics scrape's query.")
	fmt.Fprintf(w, "docket_store_up %d\n", up)
	if st == nil {
		return
	}
	promGauge(w, "docket_jobs", "Jobs of a queue by state.")
	states := slices.Clone(healthStates)
	for s := range st.Counts { // states this build does not know, too
		if !slices.Contains(states, s) {
			states = append(states, s)
		}
	}
	for _, s := range states {
		fmt.Fprintf(w, "docket_jobs{queue=%q,state=%q} %d\n", st.Queue, s, st.Counts[s])
	}
	promGauge(w, "docket_queue_oldest_pending_age_seconds", "How long the oldest pending job of a queue has waited.")
	fmt.Fprintf(w, "docket_queue_oldest_pending_age_seconds{queue=%q} %g\n", st.Queue, st.OldestPendingAge.Seconds())
	promGauge(w, "docket_store_dead_tuples", "Dead rows of the jobs table (PostgreSQL) or free pages of the database file (SQLite).")
	fmt.Fprintf(w, "docket_store_dead_tuples %d\n", st.DeadTuples)
	promGauge(w, "docket_store_oldest_transaction_age_seconds", "Age of the oldest open transaction, which holds back vacuum.")
	fmt.Fprintf(w, "docket_store_oldest_transaction_age_seconds %g\n", st.OldestXactAge.Seconds())
}

func promGauge(w io.Writer, name, help string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
}

// handleOpenAPI serves the embedded OpenAPI document.
func (s *Server) handleOpenAPI(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if _, err := w.Write(openAPIDocument); err != nil {
		return fmt.Errorf("%w: %w", errResponseStarted, err)
	}
	return nil
}
