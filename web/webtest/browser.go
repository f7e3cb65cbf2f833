// Package webtest drives a real headless Chromium for the dashboard's
// end-to-end tests, through github.com/chromedp/chromedp. chromedp starts
// the system's Chromium and speaks the DevTools protocol over the pipe the
// browser opens with --remote-debugging-pipe; it downloads nothing.
//
// Start skips the test when no Chromium is found, unless
// DOCKET_REQUIRE_BROWSER=1 (scripts/test.sh sets it), which makes it fail.
package webtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Flags are the Chromium flags every browser starts with beyond chromedp's
// defaults (headless, no first run, no background networking, ...): no
// sandbox (tests run as root in CI) and no traffic to the outside world
// (the machine's network is closed; the page is on loopback).
var Flags = []chromedp.ExecAllocatorOption{
	chromedp.NoSandbox,
	chromedp.DisableGPU,
	chromedp.Flag("disable-quic", true),
	chromedp.Flag("disable-component-update", true),
	chromedp.Flag("mute-audio", true),
	chromedp.WindowSize(1280, 1024),
}

// callTimeout bounds one browser action.
const callTimeout = 30 * time.Second

// Browser is a test's view of the package's headless Chromium: a browser
// context of its own (an incognito profile: no cookies, storage or cache
// shared with another test's), whose tabs are its pages.
type Browser struct {
	t      testing.TB
	ctx    context.Context // the browser context's first tab; pages are new tabs of it
	output *tailBuffer
}

// Find returns the Chromium binary to start: $DOCKET_CHROMIUM, else the
// first of chromium, chromium-browser, google-chrome on PATH.
func Find() (string, error) {
	if c := os.Getenv("DOCKET_CHROMIUM"); c != "" {
		return exec.LookPath(c)
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium, chromium-browser or google-chrome on PATH and DOCKET_CHROMIUM not set")
}

// Required reports whether a missing browser fails the test instead of
// skipping it (DOCKET_REQUIRE_BROWSER=1).
func Required() bool { return os.Getenv("DOCKET_REQUIRE_BROWSER") == "1" }

// process is the one Chromium of this test binary, started by the first
// Start and ended with the process: the kernel kills it when the test
// binary exits (chromedp's allocator sets Pdeathsig). A start costs about
// a CPU-second; the package's tests share it, each in a browser context of
// its own.
var process struct {
	once   sync.Once
	ctx    context.Context // the browser's first tab
	output *tailBuffer
	err    error
}

func startProcess(bin string) {
	out := &tailBuffer{max: 64 << 10}
	dir, err := os.MkdirTemp("", "docket-chromium-")
	if err != nil {
		process.err = err
		return
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], Flags...)
	opts = append(opts, chromedp.ExecPath(bin), chromedp.UserDataDir(dir), chromedp.CombinedOutput(out))
	allocCtx, _ := chromedp.NewExecAllocator(context.Background(), opts...) //nolint:govet // lives as long as the process
	ctx, _ := chromedp.NewContext(allocCtx)                                 //nolint:govet // lives as long as the process
	if err := chromedp.Do(ctx); err != nil {                                // starts the browser
		process.err = fmt.Errorf("start %s: %w\n%s", bin, err, out)
		return
	}
	process.ctx, process.output = ctx, out
}

// Start returns a fresh browser context of the package's headless Chromium
// (started on first use) for the rest of the test, disposed of when the
// test ends. Without a Chromium it skips the test, or fails it when
// Required.
func Start(t testing.TB) *Browser {
	t.Helper()
	bin, err := Find()
	if err != nil {
		if Required() {
			t.Fatalf("DOCKET_REQUIRE_BROWSER=1 but %v (scripts/test.sh installs Debian's chromium)", err)
		}
		t.Skipf("skipping the browser test: %v (install Debian's chromium, or run scripts/test.sh, which does)", err)
	}
	process.once.Do(func() { startProcess(bin) })
	if process.err != nil {
		t.Fatal(process.err)
	}
	// Not t.Context(): it ends before the cleanups run, and the failure
	// screenshot needs the browser; the cleanup below ends it.
	ctx, cancel := chromedp.NewContext(process.ctx, chromedp.WithNewBrowserContext())
	b := &Browser{t: t, ctx: ctx, output: process.output}
	t.Cleanup(func() {
		cancel() // closes the tabs and disposes of the browser context
		if t.Failed() {
			t.Logf("chromium output (tail):\n%s", b.output)
		}
	})
	if err := chromedp.Do(ctx); err != nil { // creates the browser context and its first tab
		t.Fatalf("new browser context: %v\n%s", err, b.output)
	}
	return b
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (tb *tailBuffer) Write(p []byte) (int, error) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.buf = append(tb.buf, p...)
	if over := len(tb.buf) - tb.max; over > 0 {
		tb.buf = tb.buf[over:]
	}
	return len(p), nil
}

func (tb *tailBuffer) String() string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return strings.TrimSpace(string(tb.buf))
}
