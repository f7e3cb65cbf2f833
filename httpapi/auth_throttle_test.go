package httpapi

import (
	"hash/crc32"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/docketq/docket/apikey"
)

// withSecret returns a well-formed key with key's id and another secret:
// what someone guessing the secret of a known key id sends.
func withSecret(key string) string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	body := []byte(key[:apikey.Len-6])
	last := len(body) - 1
	if body[last] == '0' {
		body[last] = '1'
	} else {
		body[last] = '0'
	}
	n := new(big.Int).SetUint64(uint64(crc32.ChecksumIEEE(body)))
	sum := make([]byte, 6)
	base, mod := big.NewInt(62), new(big.Int)
	for i := 5; i >= 0; i-- {
		n.DivMod(n, base, mod)
		sum[i] = alphabet[mod.Int64()]
	}
	return string(body) + string(sum)
}

// Failed authentication is throttled per client address and per key id:
// past the limit every request of the address, or with the key id, is
// refused with 429 and Retry-After, the right key included.
func TestAuth_FailuresThrottled(t *testing.T) {
	t.Parallel()
	const admin = "an-admin-key-for-the-auth-throttle-tests-0123"
	t.Run("per address", func(t *testing.T) {
		t.Parallel()
		e := newTenantEnv(t, func(c *Config) { c.AuthFailuresPerAddr, c.AuthFailuresPerKey = 5, 100 })
		tn := e.newTenant(t, "a", 0)
		for range 5 {
			k, _ := apikey.Generate() // well formed, unknown
			e.do(t, http.MethodGet, "/v1/documents", k.Plain, nil).want(t, http.StatusUnauthorized)
		}
		r := e.do(t, http.MethodGet, "/v1/documents", tn.key, nil).want(t, http.StatusTooManyRequests)
		if r.header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
	})
	t.Run("per key id", func(t *testing.T) {
		t.Parallel()
		e := newTenantEnv(t, func(c *Config) { c.AuthFailuresPerAddr, c.AuthFailuresPerKey = 100, 3 })
		tn := e.newTenant(t, "a", 0)
		other := e.newTenant(t, "b", 0)
		for range 3 {
			e.do(t, http.MethodGet, "/v1/documents", withSecret(tn.key), nil).want(t, http.StatusUnauthorized)
		}
		e.do(t, http.MethodGet, "/v1/documents", tn.key, nil).want(t, http.StatusTooManyRequests)
		e.do(t, http.MethodGet, "/v1/documents", other.key, nil).want(t, http.StatusOK)
	})
	t.Run("admin", func(t *testing.T) {
		t.Parallel()
		e := newTenantEnv(t, func(c *Config) { c.AdminKey, c.AuthFailuresPerAddr = admin, 5 })
		for range 5 {
			e.do(t, http.MethodGet, "/v1/admin/tenants", admin+"x", nil).want(t, http.StatusUnauthorized)
		}
		e.do(t, http.MethodGet, "/v1/admin/tenants", admin, nil).want(t, http.StatusTooManyRequests)
	})
}

// Responses that carry a tenant's data (and the admin API's) are not to be
// stored by caches; public ones may be.
func TestServer_NoStore(t *testing.T) {
	t.Parallel()
	e := newTenantEnv(t, nil)
	tn := e.newTenant(t, "a", 0)
	for _, path := range []string{"/v1/documents", "/v1/jobs", "/v1/rate-limit", "/v1/search?q=x", "/v1/documents/nope"} {
		r := e.do(t, http.MethodGet, path, tn.key, nil)
		if got := r.header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("GET %s (%d): Cache-Control %q, want no-store", path, r.status, got)
		}
	}
}

// A key's id is not secret: failures with forged keys that carry it lock
// the key id out for the forger's address only. The genuine holder, from
// another address, is still served; the forger is refused even with the
// right key.
func TestAuth_ForgedKeyIDLocksOnlyTheForger(t *testing.T) {
	t.Parallel()
	e := newTenantEnv(t, func(c *Config) { c.AuthFailuresPerAddr, c.AuthFailuresPerKey = 100, 3 })
	tn := e.newTenant(t, "a", 0)
	from := func(addr, key string) int {
		req := httptest.NewRequest(http.MethodGet, "/v1/documents", nil)
		req.RemoteAddr = addr
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, req)
		return rec.Code
	}
	const forger, holder = "192.0.2.1:40000", "198.51.100.7:50000"
	for range 3 {
		if got := from(forger, withSecret(tn.key)); got != http.StatusUnauthorized {
			t.Fatalf("forged key: %d, want 401", got)
		}
	}
	if got := from(forger, withSecret(tn.key)); got != http.StatusTooManyRequests {
		t.Errorf("the forger past the limit: %d, want 429", got)
	}
	if got := from(holder, tn.key); got != http.StatusOK {
		t.Errorf("the genuine holder from another address: %d, want 200", got)
	}
}
