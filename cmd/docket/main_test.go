package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/docketq/docket/pipeline/sandbox"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// cluster is this test process's throwaway PostgreSQL (nil with -short).
var cluster *pgtest.Cluster

// TestMain starts one PostgreSQL cluster for the package's multi-process
// tests (each gets its own empty database) and removes the docket binary
// the tests built. With -short, no cluster starts and those tests skip.
func TestMain(m *testing.M) {
	sandbox.Main() // serve's document children are this binary, run again
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	flag.Parse()
	defer removeDocketBinary()
	if testing.Short() {
		return m.Run()
	}
	c, err := pgtest.Start(pgtest.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cluster = c
	code := m.Run()
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

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

func TestRun_BadInput(t *testing.T) {
	t.Parallel()
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
		{"bad concurrency", []string{"serve", "--concurrency", "0"}, nil, "--concurrency"},
		{"tiny parse memory", []string{"serve", "--parse-memory-bytes", "1000"}, nil, "--parse-memory-bytes"},
		{"bad parse memory env", []string{"serve"}, map[string]string{"DOCKET_PARSE_MEMORY_BYTES": "lots"}, "DOCKET_PARSE_MEMORY_BYTES"},
		{"short admin key", []string{"serve", "--admin-key", "short"}, nil, "--admin-key"},
		{"24-character admin key", []string{"serve", "--admin-key", "abcdefghijklmnopqrstuvwx"}, nil, "--admin-key"},
		{"weak admin key", []string{"serve"}, map[string]string{"DOCKET_ADMIN_KEY": strings.Repeat("ab", 40)}, "--admin-key"},
		{"admin key and file", []string{"serve", "--admin-key", strings.Repeat("x", 50), "--admin-key-file", "/nonexistent"}, nil, "--admin-key"},
		{"bad blob url", []string{"serve", "--blob-url", "ftp://x/y"}, nil, "unsupported scheme"},
		{"bad listen", []string{"serve", "--listen", "256.1.1.1:99999"}, nil, "--listen"},
		{"bad embedder", []string{"serve", "--embedding-model", "gpt"}, nil, "needs a server URL"},
		{"tenants without name", []string{"tenants", "create"}, nil, "--name"},
		{"tenants bad plan", []string{"tenants", "create", "--name", "x", "--plan", "gold"}, nil, "plan"},
		{"tenants no subcommand", []string{"tenants"}, nil, "usage"},
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

// -h prints a command's flags and exits 0 (it exited 1, with "docket:
// flag: help requested"); a bad flag still exits 1.
func TestRun_HelpExitsZero(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"serve", "-h"}, {"worker", "-h"}, {"migrate", "-h"}, {"bench", "-h"},
		{"tenants", "create", "-h"}, {"jobs", "list", "-h"}, {"queue", "health", "-h"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr syncBuffer
			err := run(context.Background(), args, env(map[string]string{"DOCKET_DATA_DIR": t.TempDir()}), &stdout, &stderr)
			if code := exitCode(err); code != 0 {
				t.Errorf("exit status %d (error %v), want 0", code, err)
			}
			if !strings.Contains(stdout.String()+stderr.String(), "-") {
				t.Errorf("no flags printed: stdout %q, stderr %q", stdout.String(), stderr.String())
			}
		})
	}
	if code := exitCode(run(context.Background(), []string{"serve", "--no-such-flag"}, env(map[string]string{}), io.Discard, io.Discard)); code != 1 {
		t.Errorf("bad flag: exit status %d, want 1", code)
	}
}

// Messages show URLs without their secrets.
func TestRedact(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"postgres://app:s3cret@db:5432/docket":                 "postgres://app:xxxxx@db:5432/docket",
		"postgres://db/docket?sslmode=require&password=s3cret": "postgres://db/docket?password=xxxxx&sslmode=require",
		"s3://bucket/prefix?region=x&secret_key=s3cret":        "s3://bucket/prefix?region=x&secret_key=xxxxx",
		"postgres://app@db/docket":                             "postgres://app@db/docket",
		"mysql://app:s3cret@db:bad port/x":                     "mysql://xxxxx@db:bad port/x",
		"sqlite://./docket-data/docket.db":                     "sqlite://./docket-data/docket.db",
		"host=/a,/b port=5432,5433 password=s3cret dbname=d":   "host=/a,/b port=5432,5433 password=xxxxx dbname=d",
		"host=db password='s3 cret' dbname=d":                  "host=db password=xxxxx dbname=d",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(redact(in), "s3cret") {
			t.Errorf("redact(%q) shows the secret", in)
		}
	}
}
