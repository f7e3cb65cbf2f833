package embedding

import (
	"fmt"
	"time"
)

// Config chooses and configures an Embedder; see FromConfig.
type Config struct {
	// URL of an OpenAI-compatible server (OpenAI, Ollama, vLLM). Empty
	// selects the local Hashing embedder.
	URL string

	// Model to ask the server for; required with URL. Without URL it must be
	// empty or HashingModel.
	Model string

	// APIKey for the server, if it needs one.
	APIKey string

	// Dimensions of the vectors: for Hashing, default DefaultDimensions; for
	// a server, optional (see OpenAIConfig.Dimensions).
	Dimensions int

	// BatchSize, Timeout and MaxRetries apply to a server; see OpenAIConfig.
	BatchSize  int
	Timeout    time.Duration
	MaxRetries int
}

// FromConfig returns the Embedder cfg describes: an OpenAI client if cfg.URL
// is set, the Hashing embedder otherwise.
func FromConfig(cfg Config) (Embedder, error) {
	if cfg.URL == "" {
		if cfg.Model != "" && cfg.Model != HashingModel {
			return nil, fmt.Errorf("embedding: model %q needs a server URL (without one, the model is %s)", cfg.Model, HashingModel)
		}
		if cfg.Dimensions < 0 {
			return nil, fmt.Errorf("embedding: dimensions %d is negative", cfg.Dimensions)
		}
		return NewHashing(cfg.Dimensions), nil
	}
	return NewOpenAI(OpenAIConfig{
		BaseURL:    cfg.URL,
		APIKey:     cfg.APIKey,
		Model:      cfg.Model,
		Dimensions: cfg.Dimensions,
		BatchSize:  cfg.BatchSize,
		Timeout:    cfg.Timeout,
		MaxRetries: cfg.MaxRetries,
	})
}
