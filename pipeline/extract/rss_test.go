package extract_test

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

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

// bombChildEnv names the bomb a re-executed test binary parses, to measure its peak RSS;
// bombCopiesEnv says how many copies it parses at once.
const (
	bombChildEnv  = "DOCKET_BOMB_CHILD"
	bombCopiesEnv = "DOCKET_BOMB_COPIES"
)

// rssSlack is what the Go runtime may keep beyond a parse's reckoned cost: freed memory not yet
// returned, the collector's work.
const rssSlack = 48 << 20

// TestExtract_BombRSS runs every bomb of the table in a child process of its own (this test
// binary, re-executed) with the production engine settings, and checks the child's peak
// resident set (VmHWM) against what the memory budget reckons the parse at (Budget): a parse
// costs the process at most that. Two copies of the worst bombs at once, with a budget for one,
// cost no more than one. The figures are in docs/security.md.
func TestExtract_BombRSS(t *testing.T) {
	if name := os.Getenv(bombChildEnv); name != "" {
		bombChild(t, name, os.Getenv(bombCopiesEnv) == "2")
		return
	}
	if testing.Short() {
		t.Skip("parses every bomb in a child process")
	}
	for _, c := range bombRSSCases() {
		name := c.Type + "/" + c.Name
		t.Run(name, func(t *testing.T) {
			checkBombRSS(t, name, 1)
		})
	}
	for _, name := range []string{"pdf/flate 14 MB to 2 GiB", "pdf/title 30 MB"} {
		t.Run("two at once/"+name, func(t *testing.T) {
			checkBombRSS(t, name, 2)
		})
	}
}

// bombRSSCases is the bomb table.
func bombRSSCases() []xt.Case {
	return append(xt.PDFCases(), xt.DOCXCases()...)
}

// checkBombRSS parses copies of the named bomb at once in a child process and checks its peak
// RSS against the parse's reckoned cost.
func checkBombRSS(t *testing.T, name string, copies int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestExtract_BombRSS$", "-test.v")
	cmd.Env = append(os.Environ(), bombChildEnv+"="+name, fmt.Sprintf("%s=%d", bombCopiesEnv, copies))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var peak, base, cost int64
	var outcome string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "bomb_rss "); ok {
			// peak, base and cost in KiB, then the outcome if any
			if _, err := fmt.Sscan(v, &peak, &base, &cost); err != nil {
				t.Fatalf("child line %q: %v", v, err)
			}
			f := strings.Fields(v)
			outcome = strings.Join(f[3:], " ")
		}
	}
	if peak == 0 {
		t.Fatalf("child reported no peak RSS:\n%s", out)
	}
	t.Logf("peak RSS %d MiB (%d MiB before the parse), reckoned at %d MiB; outcome %q", peak>>10, base>>10, cost>>10, outcome)
	if bound := base + cost + rssSlack>>10; peak > bound {
		t.Errorf("peak RSS %d MiB > %d MiB: the process before the parse + the parse's reckoned cost + %d MiB", peak>>10, bound>>10, rssSlack>>20)
	}
	if name == "pdf/title 30 MB" { // the engine never materialises the title
		if bound := base + int64(copies)*(6*30<<10) + rssSlack>>10; peak > bound {
			t.Errorf("peak RSS %d MiB > %d MiB: the process before the parse + 6 x the input + %d MiB", peak>>10, bound>>10, rssSlack>>20)
		}
	}
}

// bombChild parses the named bomb (twice at once with pair, under a budget for one parse) and
// prints its peak RSS, the RSS before it and the parse's reckoned cost, in KiB, and the
// outcome. The table is built first and the peak reset after it, so the figure is the parse's:
// the process with its engine, the input, and what parsing it cost.
func bombChild(t *testing.T, name string, pair bool) {
	var data []byte
	var typ extract.Type
	for _, c := range bombRSSCases() {
		if c.Type+"/"+c.Name == name {
			data, typ = c.Data, extract.Type(c.Type)
		}
	}
	if data == nil {
		t.Fatalf("no bomb %q", name)
	}
	cost := extract.ParseCost(typ, int64(len(data)), extract.Options{}, engine)
	opts := extract.Options{Timeout: 20 * time.Second, Budget: extract.NewBudget(extract.BudgetConfig{Bytes: cost, Wait: time.Minute})}
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("reset the peak RSS: %v", err)
	}
	base, err := vmHWM()
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	for range 1 + btoi(pair) {
		go func() {
			_, err := extractBytes(t, typ, data, opts)
			errs <- err
		}()
	}
	var reasons []string
	for range 1 + btoi(pair) {
		reasons = append(reasons, extract.Reason(<-errs))
	}
	peak, err := vmHWM()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("bomb_rss %d %d %d %s\n", peak, base, cost>>10, strings.Join(reasons, ","))
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// vmHWM returns this process's peak resident set in KiB.
func vmHWM() (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}
