package httpapi_test

import (
	"testing"
	"time"
)

// A stream says it is open at once, before any event or keep-alive: a
// tenant with no active jobs has no snapshot to send, and Firefox resolves
// fetch() only at the first bytes of the body, so its dashboard said
// "connecting…" until the first keep-alive (15 s by default).
func TestEvents_OpenAtOnce(t *testing.T) {
	e := newSSEEnv(t, time.Hour)
	s := e.connect(e.tenant("A"), "")
	ev, ok := s.next()
	if !ok || ev.comment != "open" || ev.event != "" {
		t.Fatalf("first of the stream %+v (ended: %v), want the comment \": open\"", ev, !ok)
	}
}
