package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the writer goroutines of run.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// docket serve on an empty data dir migrates SQLite, runs the demo jobs
// through their stages and stops cleanly on cancellation.
func TestRun_ServeDemo(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--demo-jobs", "4"}, env(map[string]string{"DOCKET_DATA_DIR": t.TempDir()}), &stdout, &stderr)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(stdout.String(), "completed") < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("demo jobs did not complete\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	for _, stage := range []string{"downloading", "parsing", "chunking", "embedding", "analyzing"} {
		if !strings.Contains(stdout.String(), stage) {
			t.Errorf("stage %s never shown", stage)
		}
	}
}

func TestRun_BadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no command", nil, nil, "usage"},
		{"unknown command", []string{"frobnicate"}, nil, "unknown command"},
		{"bad database url", []string{"migrate"}, map[string]string{"DATABASE_URL": "mysql://x"}, "want postgres://"},
		{"bad log level", []string{"migrate", "--log-level", "loud"}, nil, "--log-level"},
		{"bad flag", []string{"serve", "--no-such-flag"}, nil, "flag provided but not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env == nil {
				tc.env = map[string]string{}
			}
			tc.env["DOCKET_DATA_DIR"] = t.TempDir()
			var stdout, stderr syncBuffer
			err := run(context.Background(), tc.args, env(tc.env), &stdout, &stderr)
			if err == nil {
				t.Fatal("run succeeded")
			}
			if msg := err.Error() + stderr.String(); !strings.Contains(msg, tc.want) && !errors.Is(err, errUsage) {
				t.Errorf("error %q, stderr %q; want %q", err, stderr.String(), tc.want)
			}
		})
	}
}
