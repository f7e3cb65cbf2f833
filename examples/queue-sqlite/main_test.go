package main

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// The example runs to the end and prints every job completed with its result.
func TestRun(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	want := `enqueued job 1 for acme
enqueued job 2 for acme
enqueued job 3 for globex
job 1 of acme: completed {"greeting":"hello, ann"}
job 2 of acme: completed {"greeting":"hello, bob"}
job 3 of globex: completed {"greeting":"hello, cy"}
`
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
}
