package httpapi

import (
	"context"
	"fmt"
	"math"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/docketq/docket"
)

// Header caps: the Idempotency-Key header, and a multipart boundary
// (RFC 2046 allows 70 characters).
const (
	maxIdempotencyKey = 255
	maxBoundary       = 70
)

// uploadDocument serves POST /v1/documents: the checks that need no body
// (headers, rate limit) first, so that a refused client that asked for
// "Expect: 100-continue" never sends its body; then the file is streamed to
// blob storage and the document and its job are created in one
// transaction, which also takes the rate-limit slot.
//
// The check before the body only reads the window; the slot is taken in
// the commit, so an upload costs one write transaction (one fsync), not
// two, and a refused or failed upload has no slot to give back. When
// several uploads pass the check for the last free slot at once, the ones
// that commit after it is gone get their 429 after their body.
func (s *Server) uploadDocument(w http.ResponseWriter, r *http.Request) error {
	t := tenantOf(r)
	key, err := idempotencyKey(r)
	if err != nil {
		return refuseUnread(w, r, err)
	}
	boundary, err := s.checkUploadHeaders(r)
	if err != nil {
		return refuseUnread(w, r, err)
	}
	if err := s.checkUploadSlot(r.Context(), t); err != nil {
		return refuseUnread(w, r, err)
	}
	u := &upload{s: s, tenant: t, idemKey: key}
	defer u.cleanup(r.Context())
	if err := u.receive(w, r, boundary); err != nil {
		return err
	}
	res, err := u.commit(r.Context())
	if err != nil {
		return err
	}
	return res.write(w)
}

// refuseUnread passes err on; when the client waits for "100 Continue"
// before sending its body, it also makes the server close the connection
// right after the refusal (Go's server would otherwise wait, after the
// response, for a body that such a client never sends).
func refuseUnread(w http.ResponseWriter, r *http.Request, err error) error {
	if strings.EqualFold(r.Header.Get("Expect"), "100-continue") && r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	}
	return err
}

// idempotencyKey returns the Idempotency-Key header ("" when absent): at
// most 255 printable ASCII characters, else 400.
func idempotencyKey(r *http.Request) (string, error) {
	vs := r.Header.Values("Idempotency-Key")
	if len(vs) == 0 {
		return "", nil
	}
	k := vs[0]
	if len(vs) > 1 || k == "" || len(k) > maxIdempotencyKey {
		return "", errorf(http.StatusBadRequest, "Idempotency-Key must be one value of 1-%d printable ASCII characters", maxIdempotencyKey)
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return "", errorf(http.StatusBadRequest, "Idempotency-Key must be printable ASCII")
		}
	}
	return k, nil
}

// checkUploadHeaders refuses, from the headers alone, a body that is not
// multipart/form-data (415) or whose Content-Length is over the limit (413).
// It returns the multipart boundary.
func (s *Server) checkUploadHeaders(r *http.Request) (string, error) {
	if r.ContentLength > s.maxUploadBody() {
		return "", errorf(http.StatusRequestEntityTooLarge, "the upload is over the %d-byte limit", s.cfg.MaxUploadBytes)
	}
	media, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || media != "multipart/form-data" || params["boundary"] == "" {
		return "", errorf(http.StatusUnsupportedMediaType, "send the file as multipart/form-data in the field \"file\"")
	}
	if b := params["boundary"]; len(b) > maxBoundary {
		return "", errorf(http.StatusBadRequest, "the multipart boundary is %d characters long; at most %d are allowed (RFC 2046)", len(b), maxBoundary)
	}
	return params["boundary"], nil
}

// maxUploadBody is the largest upload body: the file, and up to
// uploadOverhead bytes of headers and fields before it and as many after
// it (the closing boundary, an epilogue).
func (s *Server) maxUploadBody() int64 { return s.cfg.MaxUploadBytes + 2*uploadOverhead }

// rateParams is the tenant's rate limit: uploads and dispatch jobs take
// slots of the same window.
func rateParams(t *docket.Tenant) *docket.RateLimitParams {
	return &docket.RateLimitParams{Limit: t.UploadsPerHour(), Window: docket.RateWindow}
}

// checkUploadSlot refuses (429) an upload when the tenant's window has no
// free slot; it takes none.
func (s *Server) checkUploadSlot(ctx context.Context, t *docket.Tenant) error {
	var rl *docket.RateLimit
	err := s.cfg.Store.ReadTenant(ctx, t.ID, func(tx docket.Tx) error {
		var err error
		rl, err = tx.RateLimitPeek(ctx, rateParams(t))
		return err
	})
	if err != nil {
		return fmt.Errorf("check upload rate limit: %w", err)
	}
	if rl.Remaining <= 0 {
		return rateLimited(rl)
	}
	return nil
}

// rateLimited is the 429 of a window with no free slot.
func rateLimited(rl *docket.RateLimit) error {
	secs := max(1, ceilSeconds(rl.RetryAfter))
	return &httpError{
		status: http.StatusTooManyRequests, title: "Too Many Requests",
		detail: fmt.Sprintf("rate limit reached (%d uploads and dispatch jobs per hour, together); the next slot opens in %d s",
			rl.Limit, secs),
		retryAfter: secs,
		extra:      map[string]any{"retry_after_seconds": secs, "limit": rl.Limit},
	}
}

// ceilSeconds rounds d up to whole seconds, at least 1 when d is positive.
func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d.Seconds()))
}
