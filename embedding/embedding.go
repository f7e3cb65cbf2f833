// Package embedding turns text into vectors and compares them.
//
// An [Embedder] maps texts to vectors of a fixed dimension. Two are
// provided: [Hashing], a deterministic local embedder that needs no model
// (the default, and the one tests use), and [OpenAI], a client for the
// OpenAI-compatible POST /v1/embeddings API served by OpenAI, Ollama, vLLM
// and others. [FromConfig] chooses between them.
//
// Vectors are compared with [Cosine]; [TopK] finds the nearest of many by
// exact search. Store [Embedder.Model] and [Embedder.Dimensions] with every
// vector: vectors from different models are not comparable.
package embedding

import (
	"context"
	"errors"
)

// Embedder maps texts to vectors.
type Embedder interface {
	// Embed returns one vector per text, in the order of texts, each of
	// Dimensions() numbers.
	Embed(ctx context.Context, texts []string) ([][]float32, error)

	// Model names the model; vectors of different models do not compare.
	Model() string

	// Dimensions is the length of the vectors. An embedder that learns it
	// from its first response returns 0 until then.
	Dimensions() int
}

// Errors of the HTTP embedders. An *APIError wraps one of them.
var (
	// ErrUnauthorized: the server refused the credentials (401, 403).
	ErrUnauthorized = errors.New("embedding: unauthorized")

	// ErrQuotaExceeded: the account is out of quota (a 429 saying so).
	ErrQuotaExceeded = errors.New("embedding: quota exceeded")

	// ErrInvalidRequest: the server rejected the request (other 4xx), for
	// example an unknown model or an input too long; or an input was empty.
	ErrInvalidRequest = errors.New("embedding: invalid request")

	// ErrRateLimited: still rate limited (429) after all retries.
	ErrRateLimited = errors.New("embedding: rate limited")

	// ErrUnavailable: server errors (5xx), timeouts or network errors
	// persisted after all retries.
	ErrUnavailable = errors.New("embedding: service unavailable")

	// ErrBadResponse: the response could not be used: not JSON, the wrong
	// number of vectors, indexes missing or repeated, wrong dimensions.
	ErrBadResponse = errors.New("embedding: bad response")
)

// IsPermanent reports whether err will not go away by retrying the same
// request later: credentials, quota, an invalid request or an unusable
// response (usually a configuration mistake).
func IsPermanent(err error) bool {
	return errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrQuotaExceeded) ||
		errors.Is(err, ErrInvalidRequest) || errors.Is(err, ErrBadResponse)
}
