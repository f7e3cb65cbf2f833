package extracttest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The bomb tables' memory tests run each bomb in a child process, the test binary re-executed
// with ChildEnv naming the bomb, and read the child's peak resident set (VmHWM, Linux).

// ChildEnv names the bomb a re-executed test binary parses; CopiesEnv how many copies at once.
const (
	ChildEnv  = "DOCKET_BOMB_CHILD"
	CopiesEnv = "DOCKET_BOMB_COPIES"
)

// RSSSlack is what the Go runtime may keep beyond a parse's reckoned cost: freed memory not
// yet returned, the collector's work.
const RSSSlack = 48 << 20

// ResetPeakRSS returns freed memory to the OS and resets the process's peak resident set to
// its current one (Linux: /proc/self/clear_refs), and returns that, in bytes.
func ResetPeakRSS() (int64, error) {
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return 0, fmt.Errorf("reset the peak RSS: %w", err)
	}
	return PeakRSS()
}

// PeakRSS returns the process's peak resident set (VmHWM) in bytes.
func PeakRSS() (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}

// ChildResult is what a child reports: its peak RSS, its RSS before the parse and the parse's
// reckoned cost, in bytes, and the outcome.
type ChildResult struct {
	Peak, Base, Cost int64
	Outcome          string
}

// Report prints r for the parent to read.
func (r ChildResult) Report() {
	fmt.Printf("bomb_rss %d %d %d %s\n", r.Peak, r.Base, r.Cost, r.Outcome)
}

// RunChild re-executes this test binary running only test, with the bomb name and copies in its
// environment, and returns what it reported.
func RunChild(t *testing.T, test, name string, copies int) ChildResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), ChildEnv+"="+name, fmt.Sprintf("%s=%d", CopiesEnv, copies))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var r ChildResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "bomb_rss "); ok {
			if _, err := fmt.Sscan(v, &r.Peak, &r.Base, &r.Cost); err != nil {
				t.Fatalf("child line %q: %v", v, err)
			}
			r.Outcome = strings.Join(strings.Fields(v)[3:], " ")
		}
	}
	if r.Peak == 0 {
		t.Fatalf("child reported no peak RSS:\n%s", out)
	}
	return r
}

// CheckBound logs r and fails t when the child's peak is over its RSS before the parse + the
// parse's reckoned cost + RSSSlack.
func (r ChildResult) CheckBound(t *testing.T) {
	t.Helper()
	t.Logf("peak RSS %d MiB (%d MiB before the parse), reckoned at %d MiB; outcome %q", r.Peak>>20, r.Base>>20, r.Cost>>20, r.Outcome)
	if bound := r.Base + r.Cost + RSSSlack; r.Peak > bound {
		t.Errorf("peak RSS %d MiB > %d MiB: the process before the parse + the parse's reckoned cost + %d MiB", r.Peak>>20, bound>>20, RSSSlack>>20)
	}
}
