package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A request that matches no route is answered with a problem document, as
// every error is: 404 for an unknown path, 405 with the mux's Allow header
// for a method the path does not take.
func TestServer_UnroutedProblem(t *testing.T) {
	t.Parallel()
	e := newTenantEnv(t, nil)
	for _, tc := range []struct {
		method, path string
		want         int
		allow        string
	}{
		{http.MethodGet, "/nonexistent", http.StatusNotFound, ""},
		{http.MethodPost, "/healthz", http.StatusMethodNotAllowed, "GET, HEAD"},
		{http.MethodPut, "/v1/documents", http.StatusMethodNotAllowed, "GET, HEAD, POST"},
	} {
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		if rec.Code != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, rec.Code, tc.want)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
			t.Errorf("%s %s: content type %q, want application/problem+json", tc.method, tc.path, ct)
		}
		if got := rec.Header().Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
		}
		var p struct {
			Status int    `json:"status"`
			Title  string `json:"title"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Status != tc.want || p.Title != http.StatusText(tc.want) {
			t.Errorf("%s %s: body %q (%v), want a %d problem", tc.method, tc.path, rec.Body.Bytes(), err, tc.want)
		}
	}
}
