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

// maxIdempotencyKey caps the Idempotency-Key header.
const maxIdempotencyKey = 255

// uploadDocument serves POST /v1/documents: the checks that need no body
// (headers, rate limit) first, so that a refused client that asked for
// "Expect: 100-continue" never sends its body; then the file is streamed to
// blob storage and the document and its job are created in one
// transaction.
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
	slot, err := s.takeUploadSlot(r.Context(), t)
	if err != nil {
		return refuseUnread(w, r, err)
	}
	u := &upload{s: s, tenant: t, slot: slot, idemKey: key}
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
	return params["boundary"], nil
}

// maxUploadBody is the largest upload body: the file, and up to
// uploadOverhead bytes of headers and fields before it and as many after
// it (the closing boundary, an epilogue).
func (s *Server) maxUploadBody() int64 { return s.cfg.MaxUploadBytes + 2*uploadOverhead }

// rateParams is the tenant's upload rate limit.
func rateParams(t *docket.Tenant) *docket.RateLimitParams {
	return &docket.RateLimitParams{Limit: t.UploadsPerHour(), Window: docket.RateWindow}
}

// takeUploadSlot takes a slot of the tenant's upload window and returns its
// id, or a 429 when none is free.
func (s *Server) takeUploadSlot(ctx context.Context, t *docket.Tenant) (int64, error) {
	var rl *docket.RateLimit
	err := s.cfg.Store.InTenant(ctx, t.ID, func(tx docket.Tx) error {
		var err error
		rl, err = tx.RateLimitTake(ctx, rateParams(t))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("take upload slot: %w", err)
	}
	if !rl.Allowed {
		secs := ceilSeconds(rl.RetryAfter)
		return 0, &httpError{
			status: http.StatusTooManyRequests, title: "Too Many Requests",
			detail:     fmt.Sprintf("upload rate limit reached (%d per hour); the next slot opens in %d s", rl.Limit, secs),
			retryAfter: secs,
			extra:      map[string]any{"retry_after_seconds": secs, "limit": rl.Limit},
		}
	}
	return rl.SlotID, nil
}

// ceilSeconds rounds d up to whole seconds, at least 1 when d is positive.
func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d.Seconds()))
}

// refundSlot gives an upload slot back; it runs after the request's
// context may have ended.
func (s *Server) refundSlot(ctx context.Context, tenantID string, slot int64) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return s.cfg.Store.InTenant(ctx, tenantID, func(tx docket.Tx) error {
		return tx.RateLimitRefund(ctx, slot)
	})
}
