package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/apikey"
	"github.com/docketq/docket/httpapi"
)

const streamsAdminKey = "the-admin-key-of-the-event-stream-tests"

// addKey issues another key of tn.
func (e *sseEnv) addKey(tn sseTenant) sseTenant {
	e.t.Helper()
	k, err := apikey.Generate()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.driver.APIKeyInsert(e.t.Context(), &docket.APIKey{ID: k.ID, TenantID: tn.id, Hash: k.Hash, Name: "more"}); err != nil {
		e.t.Fatal(err)
	}
	return sseTenant{id: tn.id, key: k.Plain}
}

// openEvents opens GET /v1/events with key and returns its status and
// Retry-After; a stream that opened stays open until the test ends or
// close is called.
func openEvents(t *testing.T, base, key string) (status int, retryAfter string, closeIt func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	closeIt = func() { cancel(); _ = res.Body.Close() }
	t.Cleanup(closeIt)
	return res.StatusCode, res.Header.Get("Retry-After"), closeIt
}

// A key may hold MaxStreamsPerKey streams and a tenant MaxStreamsPerTenant;
// one more is refused with 429 and Retry-After, and a stream closed gives
// its place back. Another tenant is not affected.
func TestEvents_StreamLimits(t *testing.T) {
	e := newSSEEnvConfig(t, func(c *httpapi.Config) { c.MaxStreamsPerKey, c.MaxStreamsPerTenant = 2, 3 })
	a := e.tenant("a")
	a2 := e.addKey(a)
	b := e.tenant("b")
	want := func(key string, status int) func() {
		t.Helper()
		got, retry, closeIt := openEvents(t, e.url, key)
		if got != status {
			t.Fatalf("stream %d, want %d", got, status)
		}
		if status == http.StatusTooManyRequests && retry == "" {
			t.Error("429 without Retry-After")
		}
		return closeIt
	}
	first := want(a.key, http.StatusOK)
	want(a.key, http.StatusOK)
	want(a.key, http.StatusTooManyRequests) // the key's cap
	want(a2.key, http.StatusOK)
	want(a2.key, http.StatusTooManyRequests) // the tenant's cap
	want(b.key, http.StatusOK)

	first()
	deadline := time.Now().Add(sseWait)
	for {
		status, _, closeIt := openEvents(t, e.url, a.key)
		if status == http.StatusOK {
			break
		}
		closeIt()
		if time.Now().After(deadline) {
			t.Fatalf("a closed stream's place was not given back: %d", status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Revoking a key ends its open streams: at once when revoked through this
// server's admin API, within StreamAuthInterval when revoked elsewhere (the
// CLI, another server). A stream of the tenant's other key goes on.
func TestEvents_RevokedKeyEndsStream(t *testing.T) {
	for _, tc := range []struct {
		name   string
		revoke func(e *sseEnv, tn sseTenant, keyID string)
	}{
		{"admin API", func(e *sseEnv, tn sseTenant, keyID string) {
			req, _ := http.NewRequest(http.MethodDelete, e.url+"/v1/admin/tenants/"+tn.id+"/keys/"+keyID, nil)
			req.Header.Set("Authorization", "Bearer "+streamsAdminKey)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				e.t.Fatal(err)
			}
			_ = res.Body.Close()
			if res.StatusCode != http.StatusNoContent {
				e.t.Fatalf("revoke: %d", res.StatusCode)
			}
		}},
		{"store", func(e *sseEnv, tn sseTenant, keyID string) {
			if err := e.driver.APIKeyRevoke(e.t.Context(), tn.id, keyID); err != nil {
				e.t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			interval := time.Hour // only the admin API's revocation can end it
			if tc.name == "store" {
				interval = 50 * time.Millisecond
			}
			e := newSSEEnvConfig(t, func(c *httpapi.Config) {
				c.AdminKey, c.StreamAuthInterval, c.KeepAlive = streamsAdminKey, interval, 200*time.Millisecond
			})
			tn := e.tenant("a")
			other := e.addKey(tn)
			revoked := e.connect(tn, "")
			kept := e.connect(other, "")
			keyID, err := apikey.Parse(tn.key)
			if err != nil {
				t.Fatal(err)
			}
			tc.revoke(e, tn, keyID)
			deadline := time.Now().Add(sseWait)
			for {
				if _, ok := revoked.next(); !ok {
					break // ended
				}
				if time.Now().After(deadline) {
					t.Fatalf("the stream of a revoked key still open after %s", sseWait)
				}
			}
			// The other key's stream still gets its keep-alives.
			for range 3 {
				if _, ok := kept.next(); !ok {
					t.Fatal("the stream of a key not revoked ended")
				}
			}
		})
	}
}
