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
// Last-Event-ID (when sent; its newest maxReplay changes), the active jobs,
// then every change, each as "id: <id>", "event: job" and "data: <job
// JSON>", with a ": keep-alive" comment every Config.KeepAlive. A key holds
// at most MaxStreamsPerKey streams and a tenant MaxStreamsPerTenant (429
// beyond). It ends when the client goes away, when a write takes longer
// than StreamWriteTimeout (a client that does not read), when the key is
// revoked or its tenant removed (checked every StreamAuthInterval, at once
// for a revocation through this server), or when the subscription closes:
// the feed stopped (the server is shutting down) or dropped a client too
// slow to keep up, which then reconnects with its Last-Event-ID.
func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Events == nil {
		return errorf(http.StatusServiceUnavailable, "live events are not enabled on this server")
	}
	ctx, end := context.WithCancelCause(r.Context())
	defer end(nil)
	st := &stream{keyID: keyIDOf(r), tenantID: tenantOf(r).ID, end: end}
	if err := s.streams.add(st, s.cfg.MaxStreamsPerKey, s.cfg.MaxStreamsPerTenant); err != nil {
		return err
	}
	defer s.streams.remove(st)
	sub, err := s.cfg.Events.Subscribe(ctx, st.tenantID)
	if errors.Is(err, feed.ErrClosed) {
		return errorf(http.StatusServiceUnavailable, "the server is shutting down")
	}
	if err != nil {
		return fmt.Errorf("subscribe to events: %w", err)
	}
	defer sub.Close()
	replay, err := s.replay(ctx, st.tenantID, r.Header.Get("Last-Event-ID"), sub.Snapshot)
	if err != nil {
		return err
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // no proxy buffering
	w.WriteHeader(http.StatusOK)
	sse := &sseWriter{w: w, rc: http.NewResponseController(w), timeout: s.cfg.StreamWriteTimeout}
	defer sse.finish()
	// Firefox resolves fetch() only at the body's first bytes: with nothing
	// to replay and no active jobs, a comment says the stream is open
	// (else the page would wait for the first keep-alive).
	if len(replay) == 0 && len(sub.Snapshot) == 0 {
		sse.buf.WriteString(": open\n\n")
	}
	if sse.changes(replay) != nil || sse.changes(sub.Snapshot) != nil || sse.flush() != nil {
		return nil // the client went away or does not read
	}
	return s.stream(ctx, sse, sub, st)
}

// maxReplay caps the changes replayed after a Last-Event-ID: the newest
// are sent (the snapshot of active jobs follows in any case).
const maxReplay = 500

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
	if len(out) > maxReplay {
		out = out[len(out)-maxReplay:]
	}
	return out, nil
}

// stream sends the subscription's changes and keep-alive comments until
// the client goes away, the key is no longer usable or the subscription
// closes.
func (s *Server) stream(ctx context.Context, sse *sseWriter, sub *feed.Subscription, st *stream) error {
	keepAlive := time.NewTicker(s.cfg.KeepAlive)
	defer keepAlive.Stop()
	authCheck := time.NewTicker(s.cfg.StreamAuthInterval)
	defer authCheck.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-authCheck.C:
			if !s.keyUsable(ctx, st.keyID, st.tenantID) {
				return nil
			}
			continue
		case c, ok := <-sub.C:
			if !ok {
				return nil
			}
			if sse.change(c) != nil {
				return nil
			}
			// Send what else is ready in the same write.
			for drained := false; !drained; {
				select {
				case c, ok := <-sub.C:
					if !ok {
						_ = sse.flush()
						return nil
					}
					if sse.change(c) != nil {
						return nil
					}
				default:
					drained = true
				}
			}
		case <-keepAlive.C:
			sse.buf.WriteString(": keep-alive\n\n")
		}
		if err := sse.flush(); err != nil {
			return nil // the client went away or does not read
		}
	}
}

// sseFlushAt is how much an sseWriter buffers before it writes.
const sseFlushAt = 32 << 10

// sseWriter formats server-sent events into a buffer and flushes it, each
// write within a deadline.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	buf     bytes.Buffer
}

func (e *sseWriter) changes(cs []feed.Change) error {
	for _, c := range cs {
		if err := e.change(c); err != nil {
			return err
		}
	}
	return nil
}

// change adds one job event: the job as the rest of the API shows it. The
// buffer is written once it holds sseFlushAt bytes.
func (e *sseWriter) change(c feed.Change) error {
	v := jobView(c.Job, c.Position)
	v.Paused = c.Paused
	data, err := json.Marshal(v)
	if err != nil {
		return nil // a JobView always encodes
	}
	e.buf.WriteString("id: ")
	e.buf.WriteString(c.ID)
	e.buf.WriteString("\nevent: job\ndata: ")
	e.buf.Write(data)
	e.buf.WriteString("\n\n")
	if e.buf.Len() >= sseFlushAt {
		return e.flush()
	}
	return nil
}

// flush writes the buffer and flushes it to the client, failing when that
// takes longer than the timeout.
func (e *sseWriter) flush() error {
	_ = e.rc.SetWriteDeadline(time.Now().Add(e.timeout))
	if e.buf.Len() > 0 {
		if _, err := e.w.Write(e.buf.Bytes()); err != nil {
			return err
		}
		e.buf.Reset()
	}
	return e.rc.Flush()
}

// finish gives the end of the response its own deadline.
func (e *sseWriter) finish() {
	_ = e.rc.SetWriteDeadline(time.Now().Add(e.timeout))
}
