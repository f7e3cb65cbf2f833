package feed

import (
	"context"
	"testing"
)

// startFeed runs a feed with cfg until the test ends, then stops it and
// checks that Run returned cleanly.
func startFeed(t *testing.T, cfg Config) *Feed {
	t.Helper()
	f := New(cfg)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	return f
}
