package httpapi

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"testing"
)

func TestUpload_Idempotency(t *testing.T) {
	t.Parallel()
	forEachStore(t, nil, func(t *testing.T, e *tenantEnv) {
		a := e.newTenant(t, "acme", 0)
		first := e.upload(t, a.key, "a.txt", []byte("same"), "Idempotency-Key", "k-1").want(t, http.StatusAccepted)
		blobs := e.blobCount(t)
		again := e.upload(t, a.key, "a.txt", []byte("same"), "Idempotency-Key", "k-1").want(t, http.StatusAccepted)
		if !bytes.Equal(first.body, again.body) || again.header.Get("Location") != first.header.Get("Location") ||
			again.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay differs:\n%s\n%s", first.body, again.body)
		}
		e.upload(t, a.key, "a.txt", []byte("other"), "Idempotency-Key", "k-1").want(t, http.StatusUnprocessableEntity)
		e.upload(t, a.key, "b.txt", []byte("same"), "Idempotency-Key", "k-1").want(t, http.StatusUnprocessableEntity)
		if n := e.blobCount(t); n != blobs {
			t.Errorf("blobs %d after replays, want %d", n, blobs)
		}
		var rl rateLimitView
		e.do(t, http.MethodGet, "/v1/rate-limit", a.key, nil).want(t, http.StatusOK).decode(t, &rl)
		if rl.Remaining != rl.Limit-1 {
			t.Errorf("remaining %d of %d: replays and refusals must give their slot back", rl.Remaining, rl.Limit)
		}
		for _, k := range []string{"ключ", strings.Repeat("k", 256)} {
			e.upload(t, a.key, "a.txt", []byte("x"), "Idempotency-Key", k).want(t, http.StatusBadRequest)
		}
	})
}

// TestUpload_IdempotencyConcurrent: requests racing with one key make one
// document, and all get its response.
func TestUpload_IdempotencyConcurrent(t *testing.T) {
	t.Parallel()
	forEachStore(t, nil, func(t *testing.T, e *tenantEnv) {
		a := e.newTenant(t, "acme", 0)
		const n = 6
		bodies := make([][]byte, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				r := e.upload(t, a.key, "race.txt", []byte("racing"), "Idempotency-Key", "race")
				if r.status != http.StatusAccepted {
					t.Errorf("status %d: %s", r.status, r.body)
				}
				bodies[i] = r.body
			})
		}
		wg.Wait()
		for i := 1; i < n; i++ {
			if !bytes.Equal(bodies[i], bodies[0]) {
				t.Errorf("response %d differs:\n%s\n%s", i, bodies[i], bodies[0])
			}
		}
		var list struct {
			Documents []DocumentView `json:"documents"`
		}
		e.do(t, http.MethodGet, "/v1/documents", a.key, nil).want(t, http.StatusOK).decode(t, &list)
		if len(list.Documents) != 1 {
			t.Errorf("%d documents, want 1", len(list.Documents))
		}
		if b := e.blobCount(t); b != 1 {
			t.Errorf("%d blobs, want 1", b)
		}
	})
}
