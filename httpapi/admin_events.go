package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/feed"
)

// ActivitySource tells the admin event stream when the watched queue
// changed; *feed.Feed is one. The stream is served when Config.Events
// implements it.
type ActivitySource interface {
	// Watch returns a channel that receives a signal soon after a job of
	// the queue changes, closed by stop or when the source stops.
	Watch() (signals <-chan struct{}, stop func())
}

var _ ActivitySource = (*feed.Feed)(nil)

// Pacing of the admin event stream's reads.
const (
	// adminEventDebounce is how long a signal waits for more before the
	// health is read: a burst of changes costs one read.
	adminEventDebounce = 200 * time.Millisecond
	// adminEventMinGap is the least time between two reads of one stream,
	// and adminEventCostFactor how many times the last read's duration the
	// gap is at least: a store slow to answer (10^6 jobs) is read less
	// often, so that a watching console costs it at most a fifth of a
	// connection's time.
	adminEventMinGap     = time.Second
	adminEventCostFactor = 4
	// adminEventReadTimeout bounds one read.
	adminEventReadTimeout = 30 * time.Second
)

// adminStreamKey counts the admin key's event streams among the tenants'
// (an API key id never has this form).
const adminStreamKey = "(admin)"

// adminEventParams is what every pushed snapshot reads: the views'
// cheap parts, as for a page that polls (no 24-hour performance, no
// counts of finished jobs), and the store's health.
var adminEventParams = docket.HealthParams{Limit: docket.DefaultHealthLimit, SkipPerformance: true, SkipFinished: true}

// adminEvents streams the queue's health to the operator console as
// server-sent events: "event: health" with the body of
// GET /v1/admin/health?performance=false&finished=false at once, then
// again after the jobs change (debounced, read at most every
// adminEventMinGap or four times the last read's duration, whichever is
// longer), even when it equals the last one sent (jobs may have started
// and finished between two reads, which a client reads as a cue to fetch
// what the snapshot leaves out), and at every Config.KeepAlive when it
// changed (ages grow, scheduled jobs fall due), else a ": keep-alive"
// comment. Each event is the whole state, so
// a client that reconnects needs no Last-Event-ID: its first event
// brings it up to date. The admin key holds at most MaxStreamsPerKey
// streams (429 beyond); the key is fixed when the server starts, so no
// revocation ends them. A stream ends when the client goes away or does
// not read (StreamWriteTimeout), when a read of the store fails (the
// client reconnects), or when the event source stops (the server is
// shutting down).
func (s *Server) adminEvents(w http.ResponseWriter, r *http.Request) error {
	src, ok := s.cfg.Events.(ActivitySource)
	if !ok {
		return errorf(http.StatusServiceUnavailable, "live events are not enabled on this server")
	}
	ctx, end := context.WithCancelCause(r.Context())
	defer end(nil)
	st := &stream{keyID: adminStreamKey, tenantID: adminStreamKey, end: end}
	if err := s.streams.add(st, s.cfg.MaxStreamsPerKey, s.cfg.MaxStreamsPerKey); err != nil {
		return err
	}
	defer s.streams.remove(st)
	signals, stop := src.Watch()
	defer stop()
	a := &adminStream{s: s}
	first, err := a.read(ctx)
	if err != nil {
		return err
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	sse := &sseWriter{w: w, rc: http.NewResponseController(w), timeout: s.cfg.StreamWriteTimeout}
	defer sse.finish()
	if sse.event("health", first) != nil || sse.flush() != nil {
		return nil
	}
	a.sent = first
	return a.run(ctx, sse, signals)
}

// adminStream is one open GET /v1/admin/events.
type adminStream struct {
	s        *Server
	sent     []byte        // the last snapshot sent
	readAt   time.Time     // when the last read began
	readCost time.Duration // how long it took
}

// read reads a snapshot of the health as JSON.
func (a *adminStream) read(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, adminEventReadTimeout)
	defer cancel()
	a.readAt = time.Now()
	p := adminEventParams
	v, err := a.s.health(ctx, &p)
	a.readCost = time.Since(a.readAt)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// gap is how long after the last read the next may begin.
func (a *adminStream) gap() time.Duration {
	return max(adminEventMinGap, adminEventCostFactor*a.readCost)
}

// run sends snapshots and keep-alives until the client goes away, a read
// fails or the signals end.
func (a *adminStream) run(ctx context.Context, sse *sseWriter, signals <-chan struct{}) error {
	keepAlive := time.NewTicker(a.s.cfg.KeepAlive)
	defer keepAlive.Stop()
	due := time.NewTimer(time.Hour)
	due.Stop()
	defer due.Stop()
	armed := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-signals:
			if !ok {
				return nil
			}
			if !armed {
				armed = true
				due.Reset(max(adminEventDebounce, a.gap()-time.Since(a.readAt)))
			}
			continue
		case <-due.C:
			armed = false
			if !a.send(ctx, sse, false) {
				return nil
			}
		case <-keepAlive.C:
			if !a.send(ctx, sse, true) {
				return nil
			}
		}
		if sse.flush() != nil {
			return nil // the client went away or does not read
		}
	}
}

// send reads the health and adds it to the stream: always after a change,
// at a keep-alive only when it differs from the last sent (else a comment).
// It reports false when the stream should end: the read failed.
func (a *adminStream) send(ctx context.Context, sse *sseWriter, keepAlive bool) bool {
	snap, err := a.read(ctx)
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
			a.s.logger.Warn("admin events: read health", "error", err)
		}
		return false
	}
	if keepAlive && string(snap) == string(a.sent) {
		sse.buf.WriteString(": keep-alive\n\n")
		return true
	}
	a.sent = snap
	return sse.event("health", snap) == nil
}

// event adds a named event whose data is one line of JSON.
func (e *sseWriter) event(name string, data []byte) error {
	e.buf.WriteString("event: ")
	e.buf.WriteString(name)
	e.buf.WriteString("\ndata: ")
	e.buf.Write(data)
	e.buf.WriteString("\n\n")
	if e.buf.Len() >= sseFlushAt {
		return e.flush()
	}
	return nil
}
