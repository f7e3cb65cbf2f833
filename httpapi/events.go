package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/feed"
)

// EventSource feeds GET /v1/events; *feed.Feed is one. Subscribe returns a
// tenant's active jobs and then its changes; Since replays the changes
// after an event id (an error wrapping docket.ErrInvalid for an id it does
// not know how to read).
type EventSource interface {
	Subscribe(ctx context.Context, tenantID string) (*feed.Subscription, error)
	Since(ctx context.Context, tenantID, lastEventID string) ([]feed.Change, error)
}

var _ EventSource = (*feed.Feed)(nil)

// eventRoutes serves server-sent events of the caller's jobs.
func (s *Server) eventRoutes() []route {
	return []route{{method: http.MethodGet, pattern: "/v1/events", access: tenant, handle: s.events}}
}

// events streams the tenant's jobs as server-sent events: the replay after
// Last-Event-ID (when sent), the active jobs, then every change, each as
// "id: <id>", "event: job" and "data: <job JSON>", with a ": keep-alive"
// comment every Config.KeepAlive. It ends when the client goes away or the
// subscription closes: the feed stopped (the server is shutting down) or
// dropped a client too slow to keep up, which then reconnects with its
// Last-Event-ID.
func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Events == nil {
		return errorf(http.StatusServiceUnavailable, "live events are not enabled on this server")
	}
	ctx, tenantID := r.Context(), tenantOf(r).ID
	sub, err := s.cfg.Events.Subscribe(ctx, tenantID)
	if errors.Is(err, feed.ErrClosed) {
		return errorf(http.StatusServiceUnavailable, "the server is shutting down")
	}
	if err != nil {
		return fmt.Errorf("subscribe to events: %w", err)
	}
	defer sub.Close()
	replay, err := s.replay(ctx, tenantID, r.Header.Get("Last-Event-ID"), sub.Snapshot)
	if err != nil {
		return err
	}

	rc := http.NewResponseController(w)
	// The stream outlives any write timeout the server may set.
	if err := rc.SetWriteDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return fmt.Errorf("clear write deadline: %w", err)
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // no proxy buffering
	w.WriteHeader(http.StatusOK)
	sse := &sseWriter{w: w, rc: rc}
	sse.changes(replay)
	sse.changes(sub.Snapshot)
	if err := sse.flush(); err != nil {
		return nil // the client went away
	}
	return s.stream(ctx, sse, sub)
}

// replay returns the changes after lastEventID that the snapshot does not
// show already. An id the source cannot read starts afresh: the snapshot
// is what the client needs.
func (s *Server) replay(ctx context.Context, tenantID, lastEventID string, snapshot []feed.Change) ([]feed.Change, error) {
	if lastEventID == "" {
		return nil, nil
	}
	changes, err := s.cfg.Events.Since(ctx, tenantID, lastEventID)
	if errors.Is(err, docket.ErrInvalid) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("replay events: %w", err)
	}
	inSnapshot := make(map[int64]bool, len(snapshot))
	for _, c := range snapshot {
		inSnapshot[c.Job.ID] = true
	}
	out := changes[:0]
	for _, c := range changes {
		if !inSnapshot[c.Job.ID] {
			out = append(out, c)
		}
	}
	return out, nil
}

// stream sends the subscription's changes and keep-alive comments until
// the client goes away or the subscription closes.
func (s *Server) stream(ctx context.Context, sse *sseWriter, sub *feed.Subscription) error {
	keepAlive := time.NewTicker(s.cfg.KeepAlive)
	defer keepAlive.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case c, ok := <-sub.C:
			if !ok {
				return nil
			}
			sse.change(c)
			// Send what else is ready in the same write.
			for drained := false; !drained; {
				select {
				case c, ok := <-sub.C:
					if !ok {
						_ = sse.flush()
						return nil
					}
					sse.change(c)
				default:
					drained = true
				}
			}
		case <-keepAlive.C:
			sse.buf.WriteString(": keep-alive\n\n")
		}
		if err := sse.flush(); err != nil {
			return nil // the client went away
		}
	}
}

// sseWriter formats server-sent events into a buffer and flushes it.
type sseWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf bytes.Buffer
}

func (e *sseWriter) changes(cs []feed.Change) {
	for _, c := range cs {
		e.change(c)
	}
}

// change adds one job event: the job as the rest of the API shows it.
func (e *sseWriter) change(c feed.Change) {
	data, err := json.Marshal(jobView(c.Job, c.Position))
	if err != nil {
		return // a JobView always encodes
	}
	e.buf.WriteString("id: ")
	e.buf.WriteString(c.ID)
	e.buf.WriteString("\nevent: job\ndata: ")
	e.buf.Write(data)
	e.buf.WriteString("\n\n")
}

// flush writes the buffer and flushes it to the client.
func (e *sseWriter) flush() error {
	if e.buf.Len() > 0 {
		if _, err := e.w.Write(e.buf.Bytes()); err != nil {
			return err
		}
		e.buf.Reset()
	}
	return e.rc.Flush()
}
