package embedding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// OpenAIConfig configures an OpenAI client.
type OpenAIConfig struct {
	// BaseURL is the server's root, for example "https://api.openai.com"
	// or "http://localhost:11434" (Ollama); a trailing "/v1" is accepted.
	// Requests go to {BaseURL}/v1/embeddings. Required.
	BaseURL string

	// APIKey is sent as a bearer token if set (local servers need none).
	APIKey string

	// Model names the model, for example "text-embedding-3-small" or
	// "nomic-embed-text". Required.
	Model string

	// Dimensions, if set, is sent as the "dimensions" parameter (models
	// that can shorten their vectors honour it) and every vector must have
	// that length. If zero, the length is learned from the first response
	// and every later vector must match it.
	Dimensions int

	// BatchSize is the most texts sent in one request. Default 64.
	BatchSize int

	// Timeout bounds each HTTP request. Default 60s.
	Timeout time.Duration

	// MaxRetries is how many times a request is retried after a 429, a 5xx,
	// a timeout or a network error. Default 4; negative means never.
	MaxRetries int

	// RetryBackoff is the wait before the first retry, doubled for each
	// later one (with up to 20% jitter), unless the server's Retry-After
	// says otherwise. Default 1s.
	RetryBackoff time.Duration

	// MaxRetryWait caps any single wait, Retry-After included. Default 60s.
	MaxRetryWait time.Duration

	// HTTPClient sends the requests. Default: a client of its own.
	HTTPClient *http.Client
}

// OpenAI is an Embedder backed by an OpenAI-compatible embeddings API. It is
// safe for concurrent use.
type OpenAI struct {
	cfg      OpenAIConfig
	endpoint string
	dims     atomic.Int64        // configured, or learned from the first response
	onWait   func(time.Duration) // test hook: called before each wait to retry
}

var _ Embedder = (*OpenAI)(nil)

// NewOpenAI checks cfg, fills in its defaults and returns a client.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if cfg.Model == "" {
		return nil, errors.New("embedding: OpenAI model is required")
	}
	base := strings.TrimSuffix(strings.TrimRight(cfg.BaseURL, "/"), "/v1")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("embedding: base URL %q must be an http(s) URL", cfg.BaseURL)
	}
	if cfg.Dimensions < 0 {
		return nil, fmt.Errorf("embedding: dimensions %d is negative", cfg.Dimensions)
	}
	cfg = cfg.withDefaults()
	c := &OpenAI{cfg: cfg, endpoint: base + "/v1/embeddings"}
	c.dims.Store(int64(cfg.Dimensions))
	return c, nil
}

func (cfg OpenAIConfig) withDefaults() OpenAIConfig {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 64
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = 4
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = time.Second
	}
	if cfg.MaxRetryWait <= 0 {
		cfg.MaxRetryWait = time.Minute
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	return cfg
}

// Model returns the configured model.
func (c *OpenAI) Model() string { return c.cfg.Model }

// Dimensions returns the configured dimension, or the one learned from the
// first response (0 before it).
func (c *OpenAI) Dimensions() int { return int(c.dims.Load()) }

// Embed sends texts in batches of BatchSize and returns their vectors in
// order. Errors wrap the package's sentinels; see IsPermanent.
func (c *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return nil, fmt.Errorf("%w: text %d is empty", ErrInvalidRequest, i)
		}
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += c.cfg.BatchSize {
		batch := texts[start:min(start+c.cfg.BatchSize, len(texts))]
		vecs, err := c.embedBatch(ctx, batch)
		if err != nil {
			return nil, fmt.Errorf("embed texts %d-%d of %d: %w", start, start+len(batch)-1, len(texts), err)
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// request is the body of POST /v1/embeddings.
type request struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

// response is the part of a successful answer that is used.
type response struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// embedBatch embeds one batch, with retries, and checks the answer.
func (c *OpenAI) embedBatch(ctx context.Context, batch []string) ([][]float32, error) {
	body, err := json.Marshal(request{Model: c.cfg.Model, Input: batch, Dimensions: c.cfg.Dimensions})
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	var resp response
	if err := c.post(ctx, body, &resp); err != nil {
		return nil, err
	}
	return c.order(resp, len(batch))
}

// order puts the response's vectors in input order by their index and
// checks that there is exactly one per input, all of the right length.
func (c *OpenAI) order(resp response, n int) ([][]float32, error) {
	if len(resp.Data) != n {
		return nil, fmt.Errorf("%w: %d vectors for %d inputs", ErrBadResponse, len(resp.Data), n)
	}
	out := make([][]float32, n)
	for i, d := range resp.Data {
		idx := i // servers that leave out the index answer in order
		if d.Index != nil {
			idx = *d.Index
		}
		if idx < 0 || idx >= n || out[idx] != nil {
			return nil, fmt.Errorf("%w: index %d missing, repeated or out of range", ErrBadResponse, idx)
		}
		if err := c.checkDims(len(d.Embedding)); err != nil {
			return nil, err
		}
		out[idx] = d.Embedding
	}
	return out, nil
}

// checkDims checks a vector's length against the expected dimension,
// learning it from the first vector if none was configured.
func (c *OpenAI) checkDims(n int) error {
	if n == 0 {
		return fmt.Errorf("%w: empty vector", ErrBadResponse)
	}
	if c.dims.CompareAndSwap(0, int64(n)) {
		return nil
	}
	if want := c.dims.Load(); int64(n) != want {
		return fmt.Errorf("%w: vector of %d dimensions, want %d", ErrBadResponse, n, want)
	}
	return nil
}
