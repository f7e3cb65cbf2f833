package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/embedding"
)

// gateEmbedder embeds queries that start with "wait" only once release is
// closed (or their context ends); others at once.
type gateEmbedder struct {
	embedding.Embedder
	started chan struct{}
	release chan struct{}
}

func (g *gateEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 1 && strings.HasPrefix(texts[0], "wait") {
		g.started <- struct{}{}
		select {
		case <-g.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.Embedder.Embed(ctx, texts)
}

// A tenant runs at most SearchesPerTenant searches at once (429 with
// Retry-After beyond), and another tenant's search is not held behind
// them; a search over SearchTimeout is answered 503 with Retry-After.
func TestSearch_TenantLimits(t *testing.T) {
	t.Parallel()
	g := &gateEmbedder{Embedder: embedding.NewHashing(0), started: make(chan struct{}, 10), release: make(chan struct{})}
	e := newTenantEnv(t, func(c *Config) {
		c.Embedder, c.SearchesPerTenant, c.SearchTimeout = g, 2, time.Hour
	})
	a, b := e.newTenant(t, "a", 0), e.newTenant(t, "b", 0)
	done := make(chan int, 2)
	for range 2 {
		go func() { done <- e.do(t, http.MethodGet, "/v1/search?q=wait", a.key, nil).status }()
		<-g.started
	}
	third := make(chan *tresp, 1)
	go func() { third <- e.doTimeout(t, "/v1/search?q=wait+more", a.key, 10*time.Second) }()
	select {
	case r := <-third:
		if r == nil || r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
			t.Errorf("a third search of the tenant: %+v, want 429 with Retry-After", r)
		}
	case <-g.started:
		t.Error("a third search of the tenant ran")
	}
	e.do(t, http.MethodGet, "/v1/search?q=other", b.key, nil).want(t, http.StatusOK)
	close(g.release)
	for range 2 {
		if s := <-done; s != http.StatusOK {
			t.Errorf("a search within the limit: %d", s)
		}
	}

	slow := newTenantEnv(t, func(c *Config) {
		c.Embedder, c.SearchTimeout = &gateEmbedder{Embedder: embedding.NewHashing(0), started: make(chan struct{}, 1), release: make(chan struct{})}, 50*time.Millisecond
	})
	r := slow.do(t, http.MethodGet, "/v1/search?q=wait", slow.newTenant(t, "a", 0).key, nil).want(t, http.StatusServiceUnavailable)
	if r.header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
}

// doTimeout is a GET that gives up (nil) after d.
func (e *tenantEnv) doTimeout(t *testing.T, path, key string, d time.Duration) *tresp {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	_ = res.Body.Close()
	return &tresp{status: res.StatusCode, header: res.Header}
}
