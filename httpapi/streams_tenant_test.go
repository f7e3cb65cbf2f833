package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/httpapi"
)

// Deleting a tenant ends its open streams: at once when deleted through
// this server's admin API, within StreamAuthInterval when deleted
// elsewhere (the CLI, another server). Another tenant's stream goes on.
func TestEvents_DeletedTenantEndsStream(t *testing.T) {
	for _, tc := range []struct {
		name     string
		interval time.Duration
		del      func(e *sseEnv, tn sseTenant)
	}{
		{"admin API", time.Hour, func(e *sseEnv, tn sseTenant) { // only the route can end it
			req, _ := http.NewRequest(http.MethodDelete, e.url+"/v1/admin/tenants/"+tn.id, nil)
			req.Header.Set("Authorization", "Bearer "+streamsAdminKey)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				e.t.Fatal(err)
			}
			_ = res.Body.Close()
			if res.StatusCode != http.StatusOK {
				e.t.Fatalf("delete: %d", res.StatusCode)
			}
		}},
		{"store", 50 * time.Millisecond, func(e *sseEnv, tn sseTenant) {
			if _, err := e.driver.TenantDelete(e.t.Context(), &docket.TenantDeleteParams{ID: tn.id}); err != nil {
				e.t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newSSEEnvConfig(t, func(c *httpapi.Config) {
				c.AdminKey, c.StreamAuthInterval, c.KeepAlive = streamsAdminKey, tc.interval, 200*time.Millisecond
			})
			tn := e.tenant("a")
			second := e.addKey(tn)
			streams := []*sseStream{e.connect(tn, ""), e.connect(second, "")}
			kept := e.connect(e.tenant("b"), "")
			tc.del(e, tn)
			deadline := time.Now().Add(sseWait)
			for i, s := range streams {
				for {
					if _, ok := s.next(); !ok {
						break // ended
					}
					if time.Now().After(deadline) {
						t.Fatalf("stream %d of a deleted tenant still open after %s", i, sseWait)
					}
				}
			}
			for range 3 {
				if _, ok := kept.next(); !ok {
					t.Fatal("the stream of another tenant ended")
				}
			}
		})
	}
}

// Pausing a tenant pauses its processing, not its access (docs/security.md):
// its keys keep working, so its streams stay open. Checked with the
// re-check every 50 ms, so a re-check that ended paused tenants' streams
// would fail it.
func TestEvents_PausedTenantKeepsStream(t *testing.T) {
	e := newSSEEnvConfig(t, func(c *httpapi.Config) {
		c.AdminKey, c.StreamAuthInterval, c.KeepAlive = streamsAdminKey, 50*time.Millisecond, 200*time.Millisecond
	})
	tn := e.tenant("a")
	s := e.connect(tn, "")
	req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/admin/tenants/"+tn.id+"/pause", nil)
	req.Header.Set("Authorization", "Bearer "+streamsAdminKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("pause: %d", res.StatusCode)
	}
	for range 5 { // about a second of keep-alives: many re-checks
		if _, ok := s.next(); !ok {
			t.Fatal("the stream of a paused tenant ended")
		}
	}
}
