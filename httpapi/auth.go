package httpapi

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/apikey"
)

type (
	tenantKey struct{}
	keyIDKey  struct{}
)

// keyIDOf returns the id of the API key that authenticated r.
func keyIDOf(r *http.Request) string {
	id, _ := r.Context().Value(keyIDKey{}).(string)
	return id
}

// tenantOf returns the tenant that authenticated r (routes with tenant
// access always have one).
func tenantOf(r *http.Request) *docket.Tenant {
	t, _ := r.Context().Value(tenantKey{}).(*docket.Tenant)
	return t
}

var (
	errNoKey      = &httpError{status: http.StatusUnauthorized, title: "Unauthorized", detail: "missing API key: send Authorization: Bearer <key>"}
	errBadKey     = &httpError{status: http.StatusUnauthorized, title: "Unauthorized", detail: "invalid API key"}
	errNoAdmin    = &httpError{status: http.StatusUnauthorized, title: "Unauthorized", detail: "invalid admin key"}
	errAdminUnset = &httpError{status: http.StatusUnauthorized, title: "Unauthorized", detail: "the admin API is disabled: start the server with --admin-key"}
)

// authorize checks r's credentials for access a and returns r with the
// caller's tenant and key id in its context. Failed attempts are counted
// per client address and key id; past the limits the caller gets 429.
func (s *Server) authorize(a access, r *http.Request) (*http.Request, error) {
	if a == public {
		return r, nil
	}
	key, ok := bearer(r)
	if !ok {
		if a == admin && s.cfg.AdminKey == "" {
			return r, errAdminUnset
		}
		return r, errNoKey
	}
	var keyID string
	if a == tenant {
		keyID, _ = apikey.Parse(key) // "" for a malformed key
	}
	if err := s.throttled(r, keyID); err != nil {
		return r, err
	}
	if a == admin {
		switch {
		case s.cfg.AdminKey == "":
			return r, errAdminUnset
		case subtle.ConstantTimeCompare([]byte(key), []byte(s.cfg.AdminKey)) != 1:
			s.failed(r, "")
			return r, errNoAdmin
		}
		return r, nil
	}
	t, err := s.authenticate(r.Context(), key)
	if errors.Is(err, errBadKey) {
		s.failed(r, keyID)
	}
	if err != nil {
		return r, err
	}
	ctx := context.WithValue(r.Context(), tenantKey{}, t)
	ctx = context.WithValue(ctx, keyIDKey{}, keyID)
	return r.WithContext(ctx), nil
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, key, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || key == "" {
		return "", false
	}
	return strings.TrimSpace(key), true
}

// authenticate returns the tenant of a key. A malformed key is refused
// before any store query; a verified key is trusted for AuthCacheTTL.
func (s *Server) authenticate(ctx context.Context, key string) (*docket.Tenant, error) {
	id, err := apikey.Parse(key)
	if err != nil {
		return nil, errBadKey
	}
	if e, ok := s.keys.get(id); ok {
		if !apikey.Verify(key, e.hash) {
			return nil, errBadKey
		}
		return e.tenant, nil
	}
	k, err := s.cfg.Store.APIKeyGet(ctx, id)
	switch {
	case errors.Is(err, docket.ErrNotFound):
		return nil, errBadKey
	case err != nil:
		return nil, err
	}
	if !apikey.Verify(key, k.Hash) || !k.Usable(time.Now()) {
		return nil, errBadKey
	}
	t, err := s.cfg.Store.TenantGet(ctx, k.TenantID)
	if err != nil {
		return nil, err
	}
	s.keys.put(id, keyEntry{hash: k.Hash, tenant: t})
	return t, nil
}

// keyCache remembers verified keys for a short time.
type keyCache struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]keyEntry
}

type keyEntry struct {
	hash    []byte
	tenant  *docket.Tenant
	expires time.Time
}

func newKeyCache(ttl time.Duration) *keyCache {
	return &keyCache{ttl: ttl, m: make(map[string]keyEntry)}
}

func (c *keyCache) get(id string) (keyEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	if !ok || time.Now().After(e.expires) {
		delete(c.m, id)
		return keyEntry{}, false
	}
	return e, true
}

func (c *keyCache) put(id string, e keyEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) > 10000 { // bounded: drop everything rather than grow
		clear(c.m)
	}
	e.expires = time.Now().Add(c.ttl)
	c.m[id] = e
}

// forget drops cached keys of a tenant (after a revocation or a change of
// the tenant made through this server).
func (c *keyCache) forget(tenantID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, e := range c.m {
		if e.tenant.ID == tenantID {
			delete(c.m, id)
		}
	}
}
