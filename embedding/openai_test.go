package embedding

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAPI imitates POST /v1/embeddings. Each request takes the next of
// script (or answers normally once script is used up), and is recorded.
type fakeAPI struct {
	t       *testing.T
	dims    int  // length of the vectors it answers with
	shuffle bool // answer in reverse order (the index field says which is which)

	mu       sync.Mutex
	script   []func(w http.ResponseWriter) bool // true: answered, stop
	requests []request
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		f.t.Errorf("decode request: %v", err)
	}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	if r.Header.Get("Authorization") != "Bearer sk-test" {
		f.mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`))
		return
	}
	var step func(http.ResponseWriter) bool
	if len(f.script) > 0 {
		step, f.script = f.script[0], f.script[1:]
	}
	f.mu.Unlock()
	if step != nil && step(w) {
		return
	}
	f.answer(w, req)
}

// answer embeds with the Hashing embedder, so the vectors are known.
func (f *fakeAPI) answer(w http.ResponseWriter, req request) {
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	dims := f.dims
	if req.Dimensions > 0 {
		dims = req.Dimensions
	}
	vecs, _ := NewHashing(dims).Embed(context.Background(), req.Input)
	items := make([]item, len(vecs))
	for i, v := range vecs {
		items[i] = item{"embedding", i, v}
	}
	if f.shuffle {
		slices.Reverse(items)
	}
	if err := json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": items, "model": req.Model}); err != nil {
		f.t.Errorf("encode: %v", err)
	}
}

func (f *fakeAPI) count() int { return len(f.reqs()) }

func (f *fakeAPI) reqs() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// status returns a script step answering with code, headers and body.
func status(code int, body string, header ...string) func(http.ResponseWriter) bool {
	return func(w http.ResponseWriter) bool {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
		w.Write([]byte(body))
		return true
	}
}

// setup starts a fake API and a client for it.
func setup(t *testing.T, f *fakeAPI, cfg OpenAIConfig) *OpenAI {
	t.Helper()
	f.t = t
	if f.dims == 0 {
		f.dims = 8
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	if cfg.BaseURL == "" {
		cfg.BaseURL = srv.URL
	}
	if cfg.APIKey == "" {
		cfg.APIKey = "sk-test"
	}
	if cfg.Model == "" {
		cfg.Model = "test-embed"
	}
	cfg.RetryBackoff = time.Millisecond
	c, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatalf("NewOpenAI: %v", err)
	}
	return c
}

var inputs = []string{"alpha", "beta gamma", "delta", "epsilon zeta", "eta"}

func TestOpenAI_Embed(t *testing.T) {
	t.Parallel()
	want, _ := NewHashing(8).Embed(context.Background(), inputs)
	for _, shuffle := range []bool{false, true} {
		f := &fakeAPI{shuffle: shuffle}
		c := setup(t, f, OpenAIConfig{BatchSize: 2})
		if c.Dimensions() != 0 {
			t.Fatalf("dimensions before any call: %d", c.Dimensions())
		}
		got, err := c.Embed(context.Background(), inputs)
		if err != nil {
			t.Fatalf("Embed: %v", err)
		}
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("shuffle=%v: vector %d is not that of %q", shuffle, i, inputs[i])
			}
		}
		if r := f.reqs(); len(r) != 3 || len(r[2].Input) != 1 || r[0].Model != "test-embed" {
			t.Fatalf("requests: %+v", r)
		}
		if c.Dimensions() != 8 || c.Model() != "test-embed" {
			t.Fatalf("Dimensions %d Model %q", c.Dimensions(), c.Model())
		}
	}
}

func TestOpenAI_dimensions(t *testing.T) {
	t.Parallel()
	f := &fakeAPI{}
	c := setup(t, f, OpenAIConfig{Dimensions: 16})
	got, err := c.Embed(context.Background(), inputs[:1])
	if err != nil || len(got[0]) != 16 || f.reqs()[0].Dimensions != 16 {
		t.Fatalf("got %v, err %v, requests %+v", got, err, f.reqs())
	}
	if c.Dimensions() != 16 {
		t.Fatalf("Dimensions() = %d", c.Dimensions())
	}
}

func TestOpenAI_retries(t *testing.T) {
	t.Parallel()
	f := &fakeAPI{script: []func(http.ResponseWriter) bool{
		status(429, `{"error":{"message":"Rate limit reached","type":"requests"}}`, "Retry-After", "0"),
		status(503, `upstream busy`),
		status(500, `{"object":"error","message":"engine crashed","type":"InternalServerError","code":500}`),
	}}
	c := setup(t, f, OpenAIConfig{MaxRetries: 3})
	var waits []time.Duration
	c.onWait = func(d time.Duration) { waits = append(waits, d) }
	if _, err := c.Embed(context.Background(), inputs); err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if f.count() != 4 {
		t.Fatalf("%d requests, want 4", f.count())
	}
	// Retry-After: 0 first, then backoff from 1ms doubling, with ≤20% jitter.
	if len(waits) != 3 || waits[0] != 0 || waits[1] < 2*time.Millisecond || waits[2] < 4*time.Millisecond || waits[2] > 5*time.Millisecond {
		t.Fatalf("waits %v", waits)
	}
}

func TestOpenAI_errors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		cfg      OpenAIConfig
		script   []func(http.ResponseWriter) bool
		want     error
		requests int    // how many were sent
		message  string // in the error
	}{
		{"bad key", OpenAIConfig{APIKey: "sk-wrong"}, nil, ErrUnauthorized, 1, "Incorrect API key provided"},
		{"forbidden", OpenAIConfig{}, steps(status(403, `{"error":"forbidden"}`)), ErrUnauthorized, 1, "forbidden"},
		{"quota", OpenAIConfig{}, steps(status(429, `{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}`)),
			ErrQuotaExceeded, 1, "exceeded your current quota"},
		{"model not found", OpenAIConfig{}, steps(status(404, `{"error":{"message":"model \"x\" not found, try pulling it first"}}`)),
			ErrInvalidRequest, 1, "try pulling it first"},
		{"input too long", OpenAIConfig{}, steps(status(400, `{"object":"error","message":"maximum context length is 512 tokens","type":"BadRequestError","code":400}`)),
			ErrInvalidRequest, 1, "maximum context length"},
		{"still rate limited", OpenAIConfig{MaxRetries: 2}, repeat(3, status(429, `{}`, "retry-after-ms", "1")), ErrRateLimited, 3, "HTTP 429"},
		{"still unavailable", OpenAIConfig{MaxRetries: 1}, repeat(2, status(502, `<html>Bad Gateway</html>`)), ErrUnavailable, 2, "Bad Gateway"},
		{"no retries", OpenAIConfig{MaxRetries: -1}, steps(status(503, ``)), ErrUnavailable, 1, "HTTP 503"},
		{"not JSON", OpenAIConfig{}, steps(status(200, `<html>`)), ErrBadResponse, 1, "decode"},
		{"too few vectors", OpenAIConfig{}, steps(status(200, `{"data":[{"index":0,"embedding":[1,2]}]}`)), ErrBadResponse, 1, "1 vectors for 5 inputs"},
		{"repeated index", OpenAIConfig{BatchSize: 2}, steps(status(200, `{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}`)),
			ErrBadResponse, 1, "index 0 missing, repeated"},
		{"index out of range", OpenAIConfig{BatchSize: 1}, steps(status(200, `{"data":[{"index":1,"embedding":[1]}]}`)), ErrBadResponse, 1, "out of range"},
		{"wrong dimensions", OpenAIConfig{Dimensions: 3, BatchSize: 1}, steps(status(200, `{"data":[{"index":0,"embedding":[1,2]}]}`)),
			ErrBadResponse, 1, "2 dimensions, want 3"},
		{"dimensions change", OpenAIConfig{BatchSize: 1},
			steps(status(200, `{"data":[{"index":0,"embedding":[1,2]}]}`), status(200, `{"data":[{"embedding":[1,2,3]}]}`)),
			ErrBadResponse, 2, "3 dimensions, want 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeAPI{script: tt.script}
			_, err := setup(t, f, tt.cfg).Embed(context.Background(), inputs)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.message) {
				t.Fatalf("err = %v, want %v containing %q", err, tt.want, tt.message)
			}
			if f.count() != tt.requests {
				t.Fatalf("%d requests, want %d", f.count(), tt.requests)
			}
			transient := errors.Is(err, ErrRateLimited) || errors.Is(err, ErrUnavailable)
			if IsPermanent(err) == transient {
				t.Fatalf("IsPermanent(%v) = %v", err, IsPermanent(err))
			}
		})
	}
}

func steps(s ...func(http.ResponseWriter) bool) []func(http.ResponseWriter) bool { return s }

func repeat(n int, s func(http.ResponseWriter) bool) []func(http.ResponseWriter) bool {
	out := make([]func(http.ResponseWriter) bool, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestOpenAI_cancelWhileWaiting cancels the context while the client waits
// out a long Retry-After (capped by MaxRetryWait): Embed returns at once.
func TestOpenAI_cancelWhileWaiting(t *testing.T) {
	t.Parallel()
	f := &fakeAPI{script: steps(status(429, `{}`, "Retry-After", "3600"))}
	c := setup(t, f, OpenAIConfig{MaxRetryWait: time.Hour - time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	var waited time.Duration
	c.onWait = func(d time.Duration) { waited = d; cancel() }
	_, err := c.Embed(ctx, inputs)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrRateLimited) {
		t.Fatalf("err = %v, want context.Canceled after a 429", err)
	}
	if waited != time.Hour-time.Second {
		t.Fatalf("waited %v, want Retry-After capped by MaxRetryWait", waited)
	}
}

func TestOpenAI_emptyInput(t *testing.T) {
	t.Parallel()
	f := &fakeAPI{}
	c := setup(t, f, OpenAIConfig{})
	if got, err := c.Embed(context.Background(), nil); err != nil || len(got) != 0 {
		t.Fatalf("no texts: %v %v", got, err)
	}
	if _, err := c.Embed(context.Background(), []string{"a", " "}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("blank text: err = %v", err)
	}
	if f.count() != 0 {
		t.Fatalf("%d requests sent", f.count())
	}
}

func TestNewOpenAI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cfg      OpenAIConfig
		endpoint string // "" for an error
	}{
		{OpenAIConfig{BaseURL: "https://api.openai.com", Model: "m"}, "https://api.openai.com/v1/embeddings"},
		{OpenAIConfig{BaseURL: "https://api.openai.com/v1/", Model: "m"}, "https://api.openai.com/v1/embeddings"},
		{OpenAIConfig{BaseURL: "http://localhost:11434/", Model: "m"}, "http://localhost:11434/v1/embeddings"},
		{OpenAIConfig{BaseURL: "http://gpu:8000/proxy", Model: "m"}, "http://gpu:8000/proxy/v1/embeddings"},
		{OpenAIConfig{BaseURL: "localhost:11434", Model: "m"}, ""},
		{OpenAIConfig{BaseURL: "http://x"}, ""},
		{OpenAIConfig{BaseURL: "http://x", Model: "m", Dimensions: -1}, ""},
	}
	for _, tt := range tests {
		c, err := NewOpenAI(tt.cfg)
		switch {
		case tt.endpoint == "" && err == nil:
			t.Errorf("%+v: no error", tt.cfg)
		case tt.endpoint != "" && (err != nil || c.endpoint != tt.endpoint):
			t.Errorf("%+v: %v, want endpoint %s", tt.cfg, err, tt.endpoint)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2024, 3, 15, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		header, value string
		want          time.Duration
		ok            bool
	}{
		{"Retry-After", "7", 7 * time.Second, true},
		{"Retry-After", "0", 0, true},
		{"Retry-After", "Fri, 15 Mar 2024 12:00:30 GMT", 30 * time.Second, true},
		{"Retry-After", "Fri, 15 Mar 2024 11:00:00 GMT", 0, true},
		{"Retry-After", "soon", 0, false},
		{"Retry-After", "-3", 0, false},
		{"Retry-After-Ms", "250", 250 * time.Millisecond, true},
		{"X-Other", "5", 0, false},
	}
	for _, tt := range tests {
		h := http.Header{}
		h.Set(tt.header, tt.value)
		if got, ok := retryAfter(h, now); got != tt.want || ok != tt.ok {
			t.Errorf("%s: %s → %v %v, want %v %v", tt.header, tt.value, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFromConfig(t *testing.T) {
	t.Parallel()
	e, err := FromConfig(Config{})
	if h, ok := e.(*Hashing); err != nil || !ok || h.Dimensions() != DefaultDimensions {
		t.Fatalf("default: %T %v", e, err)
	}
	e, err = FromConfig(Config{URL: "http://localhost:11434", Model: "nomic-embed-text", Dimensions: 768})
	if o, ok := e.(*OpenAI); err != nil || !ok || o.Model() != "nomic-embed-text" || o.Dimensions() != 768 {
		t.Fatalf("with URL: %T %v", e, err)
	}
	for _, bad := range []Config{{Model: "text-embedding-3-small"}, {URL: "http://x"}, {Dimensions: -2}} {
		if _, err := FromConfig(bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
