package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

// watchedQueue is the queue of document jobs that the admin and system
// routes report on.
const watchedQueue = docket.DocumentQueue

// readyTimeout bounds the store query behind GET /readyz.
const readyTimeout = 2 * time.Second

// systemRoutes serves health, readiness and the OpenAPI document. Metrics
// are the ops listener's (package ops), not the API's.
func (s *Server) systemRoutes() []route {
	return []route{
		{"GET", "/healthz", public, s.handleHealthz},
		{"GET", "/readyz", public, s.handleReadyz},
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

// healthStates are the states reported by queue health, in their order of life.
var healthStates = []queue.State{
	queue.StateScheduled, queue.StatePending, queue.StateRunning,
	queue.StateCompleted, queue.StateFailed, queue.StateCancelled,
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
