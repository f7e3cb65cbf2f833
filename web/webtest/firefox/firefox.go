// Package firefox drives a real headless Firefox for the dashboard's
// browser tests, over WebDriver BiDi (package bidi): Firefox speaks it
// natively when started with --remote-debugging-port, so neither
// geckodriver nor a download is needed. Debian's firefox-esr is what CI
// installs (scripts/test.sh).
//
// Start skips the test when no Firefox is found, unless
// DOCKET_REQUIRE_BROWSER=1 (scripts/test.sh sets it), which makes it fail.
// Every page records what its scripts log; Page.Errors returns the errors
// among them (console.error, uncaught exceptions, unhandled rejections,
// Content-Security-Policy violations, as Firefox reports them), which the
// tests fail on.
package firefox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/web/webtest/bidi"
)

// callTimeout bounds one browser action; startTimeout, Firefox's start
// until its session is ready. The session waits for the first window's
// idle-time startup tasks, which on a busy machine takes long: 35 s to
// 3 min measured on 2 vCPUs with 20-30 runnable processes (a few seconds
// on an idle machine). So a test process starts one Firefox and opens
// tabs in it.
const (
	callTimeout  = 30 * time.Second
	startTimeout = 4 * time.Minute
)

// origin is the Origin the BiDi connection sends, and Firefox allows.
const origin = "http://127.0.0.1"

// Find returns the Firefox binary to start: $DOCKET_FIREFOX, else the
// first of firefox-esr and firefox on PATH.
func Find() (string, error) {
	if f := os.Getenv("DOCKET_FIREFOX"); f != "" {
		return exec.LookPath(f)
	}
	for _, name := range []string{"firefox-esr", "firefox"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no firefox-esr or firefox on PATH and DOCKET_FIREFOX not set")
}

// Required reports whether a missing browser fails the test instead of
// skipping it (DOCKET_REQUIRE_BROWSER=1).
func Required() bool { return os.Getenv("DOCKET_REQUIRE_BROWSER") == "1" }

// Browser is a running headless Firefox that the test started, with one
// BiDi session.
type Browser struct {
	conn    *bidi.Conn
	Version string // e.g. "firefox 140.10.2"

	mu   sync.Mutex
	logs map[string][]bidi.LogEntry // by browsing context
}

// listening is what Firefox prints on standard error once BiDi listens.
var listening = regexp.MustCompile(`WebDriver BiDi listening on (ws://\S+)`)

// Start starts a headless Firefox with a fresh profile for the rest of the
// test and closes it when the test ends. Without a Firefox it skips the
// test, or fails it when Required.
func Start(t testing.TB) *Browser {
	t.Helper()
	bin, err := Find()
	if err != nil {
		if Required() {
			t.Fatalf("DOCKET_REQUIRE_BROWSER=1 but %v (scripts/test.sh installs Debian's firefox-esr)", err)
		}
		t.Skipf("skipping the Firefox test: %v (install Debian's firefox-esr, or run scripts/test.sh, which does)", err)
	}
	began := time.Now()
	proc, err := launch(bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := &Browser{logs: map[string][]bidi.LogEntry{}}
	t.Cleanup(func() {
		b.close(proc)
		if t.Failed() {
			t.Logf("firefox output (tail):\n%s", proc.out)
		}
	})
	deadline := time.Now().Add(startTimeout)
	var ws string
	select {
	case ws = <-proc.endpoint:
	case <-proc.exited:
		t.Fatalf("%s exited before it listened:\n%s", bin, proc.out)
	case <-time.After(time.Until(deadline)):
		t.Fatalf("%s did not say where BiDi listens within %s:\n%s", bin, startTimeout, proc.out)
	}
	if err := b.connect(ws+"/session", deadline); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, proc.out)
	}
	t.Logf("%s ready in %s", b.Version, time.Since(began).Round(100*time.Millisecond))
	return b
}

// process is a Firefox that launch started.
type process struct {
	kill     context.CancelFunc // kills it: the last resort of close
	exited   chan struct{}      // closed once it has exited
	endpoint chan string        // where BiDi listens, once Firefox says
	out      *tailBuffer        // the tail of what it printed
}

// launch starts Firefox headless on the profile directory, listening for
// BiDi on a loopback port it picks (port 0) and prints.
func launch(bin, profile string) (*process, error) {
	if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(prefs), 0o644); err != nil {
		return nil, err
	}
	ctx, kill := context.WithCancel(context.Background())
	// Package bidi's WebSocket sends an Origin, which Firefox refuses
	// unless allowed.
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-remote", "--profile", profile,
		"--remote-debugging-port=0", "--remote-allow-origins="+origin, "about:blank")
	cmd.Env = append(os.Environ(), "MOZ_CRASHREPORTER_DISABLE=1", "MOZ_HEADLESS_WIDTH=1280", "MOZ_HEADLESS_HEIGHT=1024")
	p := &process{kill: kill, exited: make(chan struct{}), endpoint: make(chan string, 1), out: &tailBuffer{max: 64 << 10}}
	cmd.Stdout = p.out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		kill()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		kill()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		scanLines(stderr, p.out, p.endpoint)
		_ = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// prefs are the profile's preferences beyond those Firefox's remote agent
// sets itself for automation (no updates, no first-run pages, no
// safe-browsing or captive-portal traffic): the machine's network is
// closed and the page is on loopback.
const prefs = `user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
user_pref("network.connectivity-service.enabled", false);
user_pref("media.autoplay.default", 5);
`

// connect opens the session and starts recording every page's log.
func (b *Browser) connect(endpoint string, deadline time.Time) error {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	conn, err := bidi.Dial(ctx, endpoint, origin)
	if err != nil {
		return err
	}
	b.conn = conn
	conn.OnLog(func(e bidi.LogEntry) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.logs[e.Source.Context] = append(b.logs[e.Source.Context], e)
	})
	caps, err := conn.SessionNew(ctx)
	if err != nil {
		return err
	}
	b.Version = caps.BrowserName + " " + caps.BrowserVersion
	// Every page's log, Content-Security-Policy violations included
	// (Firefox reports them as errors of type "javascript").
	return conn.SessionSubscribe(ctx, "log.entryAdded")
}

// close asks Firefox to quit, and kills it if it has not within a few
// seconds.
func (b *Browser) close(p *process) {
	if b.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = b.conn.BrowserClose(ctx) // the answer may not come before the socket closes
		cancel()
	}
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.kill()
		<-p.exited
	}
	p.kill() // releases the context once Firefox has exited
	if b.conn != nil {
		_ = b.conn.Close()
	}
}

// logOf returns the log entries of a browsing context so far.
func (b *Browser) logOf(tab string) []bidi.LogEntry {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]bidi.LogEntry(nil), b.logs[tab]...)
}

// scanLines copies Firefox's standard error to out and sends the BiDi
// endpoint once it is printed.
func scanLines(r io.Reader, out io.Writer, endpoint chan<- string) {
	sc := bufio.NewScanner(r)
	sent := false
	for sc.Scan() {
		line := sc.Text()
		_, _ = fmt.Fprintln(out, line)
		if m := listening.FindStringSubmatch(line); m != nil && !sent {
			endpoint <- m[1]
			sent = true
		}
	}
	_, _ = io.Copy(out, r) // a line too long for the scanner
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
