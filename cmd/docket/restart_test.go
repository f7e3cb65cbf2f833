package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The docket binary, built once per test process by buildDocket and
// removed by TestMain.
var docketBin struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// buildDocket builds this command (once per test process) and returns the
// binary's path: $DOCKET_TEST_BINARY when set (the test command builds it
// once for every package).
func buildDocket(t *testing.T) string {
	t.Helper()
	docketBin.once.Do(func() {
		if bin := os.Getenv("DOCKET_TEST_BINARY"); bin != "" {
			docketBin.path = bin
			return
		}
		dir, err := os.MkdirTemp("", "docket-bin-")
		if err != nil {
			docketBin.err = err
			return
		}
		docketBin.dir = dir
		bin := filepath.Join(dir, "docket")
		out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
		if err != nil {
			docketBin.err = fmt.Errorf("go build: %w\n%s", err, out)
			return
		}
		docketBin.path = bin
	})
	if docketBin.err != nil {
		t.Fatal(docketBin.err)
	}
	return docketBin.path
}

func removeDocketBinary() {
	if docketBin.dir != "" {
		_ = os.RemoveAll(docketBin.dir)
	}
}

// startProcess runs `docket serve` on dataDir as a child process, with a
// 2 s lease. On SQLite a large document's save holds the only writer,
// and under a loaded test run it took over a second, stalling heartbeats:
// the worker once cancelled the save in every attempt after one heartbeat
// failed (this test ran with a 15 s lease then); on a store of one process
// failing heartbeats now cancel nothing (queue's
// TestWorker_HeartbeatOutageKeepsRenewing). The restart does not wait for
// the lease: the first Migrate ends a dead process's leases.
func startProcess(t *testing.T, bin, dataDir string) (*exec.Cmd, server, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--lease", "2s", "--concurrency", "1")
	cmd.Env = append(os.Environ(), "DOCKET_DATA_DIR="+dataDir, "DOCKET_LOG_LEVEL=warn")
	var stdout, stderr syncBuffer
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go scanLines(outPipe, &stdout)
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, readBanner(t, stdout.String, stderr.String), &stderr
}

// A document whose worker process is killed with SIGKILL mid-job completes
// after the process starts again on the same data dir, and a document still
// waiting behind it is not lost either.
func TestServe_KillAndRestart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildDocket(t)
	dataDir := t.TempDir()
	cmd, srv, stderr := startProcess(t, bin, dataDir)
	big := bigText(8 << 20)
	first := upload(t, srv, "big.txt", big)
	second := upload(t, srv, "small.txt", []byte("a small note that waits behind the big one"))

	waitJob(t, srv, first, "processing", 60*time.Second)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	key := srv.key
	cmd2, srv2, stderr2 := startProcess(t, bin, dataDir)
	srv2.key = key
	j := waitJob(t, srv2, first, "completed", 120*time.Second)
	if a := j["attempt"].(float64); a < 2 {
		t.Errorf("the killed job completed in attempt %v; want a second attempt", a)
	}
	waitJob(t, srv2, second, "completed", 60*time.Second)
	var docs struct {
		Documents []map[string]any `json:"documents"`
	}
	getJSON(t, srv2, "/v1/documents", &docs)
	if len(docs.Documents) != 2 {
		t.Errorf("%d documents after restart, want 2", len(docs.Documents))
	}
	_ = cmd2.Process.Signal(syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	go func() { <-ctx.Done(); _ = cmd2.Process.Kill() }()
	if err := cmd2.Wait(); err != nil {
		t.Errorf("second process after SIGTERM: %v\nstderr:\n%s\nfirst stderr:\n%s", err, stderr2.String(), stderr.String())
	}
}

// bigText returns about n bytes of varied prose, slow enough to process
// that the test can kill the worker in the middle.
func bigText(n int) []byte {
	var b strings.Builder
	words := []string{"harbour", "ledger", "invoice", "lighthouse", "keeper", "northern", "cape", "repair", "quarterly", "report", "amount", "storm", "signal", "tower"}
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "Paragraph %d: the %s %s filed a %s about the %s on %d March 2026.\n\n",
			i, words[i%len(words)], words[(i*7)%len(words)], words[(i*3)%len(words)], words[(i*5)%len(words)], i%28+1)
	}
	return []byte(b.String())
}
