package main

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A second `docket serve` on the data dir of a running one refuses at once,
// names the process that holds the SQLite store and points to PostgreSQL;
// the first keeps serving.
func TestServe_TwiceOnOneDataDir(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildDocket(t)
	env := []string{"DOCKET_DATA_DIR=" + t.TempDir(), "DOCKET_LOG_LEVEL=warn"}
	first := startDocket(t, "first serve", bin, env, "serve", "--listen", "127.0.0.1:0")
	srv := readBanner(t, first.stdout.String, first.stderr.String)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	second := exec.CommandContext(ctx, bin, "serve", "--listen", "127.0.0.1:0")
	second.Env = append(second.Environ(), env...)
	out, err := second.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("second serve: %v, want exit status 1\n%s", err, out)
	}
	for _, want := range []string{"in use by another process", "process " + strconv.Itoa(first.pid()), "DATABASE_URL=postgres://"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("second serve's error lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "dashboard:") {
		t.Errorf("second serve printed a dashboard line:\n%s", out)
	}
	var j map[string]any
	if code := getJSON(t, srv, "/v1/jobs", &j); code != 200 {
		t.Errorf("first serve after the second was refused: GET /v1/jobs %d", code)
	}
	terminate(t, 30*time.Second, first)
}
