package httpapi

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/docketq/docket"
)

// streams tracks the open event streams: how many each key and tenant
// holds, and how to end them.
type streams struct {
	mu        sync.Mutex
	perKey    map[string]int
	perTenant map[string]int
	open      map[*stream]struct{}
}

// stream is one open GET /v1/events.
type stream struct {
	keyID, tenantID string
	end             context.CancelCauseFunc
}

// errKeyRevoked ends the streams of a key that is no longer usable.
var errKeyRevoked = errors.New("the API key was revoked, or its tenant removed")

func newStreams() *streams {
	return &streams{perKey: map[string]int{}, perTenant: map[string]int{}, open: map[*stream]struct{}{}}
}

// add counts a stream in, or refuses it (429) when its key or tenant holds
// its cap already.
func (ss *streams) add(st *stream, maxKey, maxTenant int) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	switch {
	case ss.perKey[st.keyID] >= maxKey:
		return &httpError{status: http.StatusTooManyRequests, title: "Too Many Requests", retryAfter: 5,
			detail: "this API key has the most event streams open that it may; close one"}
	case ss.perTenant[st.tenantID] >= maxTenant:
		return &httpError{status: http.StatusTooManyRequests, title: "Too Many Requests", retryAfter: 5,
			detail: "this tenant has the most event streams open that it may; close one"}
	}
	ss.perKey[st.keyID]++
	ss.perTenant[st.tenantID]++
	ss.open[st] = struct{}{}
	return nil
}

func (ss *streams) remove(st *stream) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if _, ok := ss.open[st]; !ok {
		return
	}
	delete(ss.open, st)
	if ss.perKey[st.keyID]--; ss.perKey[st.keyID] <= 0 {
		delete(ss.perKey, st.keyID)
	}
	if ss.perTenant[st.tenantID]--; ss.perTenant[st.tenantID] <= 0 {
		delete(ss.perTenant, st.tenantID)
	}
}

// endKey ends the open streams of a key.
func (ss *streams) endKey(keyID string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for st := range ss.open {
		if st.keyID == keyID {
			st.end(errKeyRevoked)
		}
	}
}

// endTenant ends the open streams of a tenant (deleted).
func (ss *streams) endTenant(tenantID string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for st := range ss.open {
		if st.tenantID == tenantID {
			st.end(errKeyRevoked)
		}
	}
}

// keyUsable reports whether a stream's key still authenticates: not
// revoked or expired, its tenant still there. A store that does not answer
// is not a revocation: the stream goes on until the next check.
func (s *Server) keyUsable(ctx context.Context, keyID, tenantID string) bool {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	k, err := s.cfg.Store.APIKeyGet(ctx, keyID)
	switch {
	case errors.Is(err, docket.ErrNotFound):
		return false
	case err != nil:
		return true
	case !k.Usable(time.Now()) || k.TenantID != tenantID:
		return false
	}
	_, err = s.cfg.Store.TenantGet(ctx, tenantID)
	return !errors.Is(err, docket.ErrNotFound)
}

// count returns how many streams are open.
func (ss *streams) count() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.open)
}
