package httpapi

import (
	"net/http"

	"github.com/docketq/docket"
)

// rateLimitView is the body of GET /v1/rate-limit.
type rateLimitView struct {
	Limit             int `json:"limit"`
	Remaining         int `json:"remaining"`
	WindowSeconds     int `json:"window_seconds"`
	RetryAfterSeconds int `json:"retry_after_seconds"`
}

// getRateLimit serves GET /v1/rate-limit: the tenant's upload window
// without taking a slot.
func (s *Server) getRateLimit(w http.ResponseWriter, r *http.Request) error {
	t := tenantOf(r)
	var rl *docket.RateLimit
	err := s.cfg.Store.ReadTenant(r.Context(), t.ID, func(tx docket.Tx) error {
		var err error
		rl, err = tx.RateLimitPeek(r.Context(), rateParams(t))
		return err
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, rateLimitView{
		Limit: rl.Limit, Remaining: rl.Remaining,
		WindowSeconds: int(docket.RateWindow.Seconds()), RetryAfterSeconds: ceilSeconds(rl.RetryAfter),
	})
}
