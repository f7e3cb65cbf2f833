// Package webtest drives a real headless Chromium for the dashboard's
// end-to-end tests. It speaks the Chrome DevTools Protocol over the pipe
// Chromium opens with --remote-debugging-pipe (JSON messages separated by
// NUL bytes on file descriptors 3 and 4), so it needs no WebDriver, no
// websocket and no dependency: only a Chromium binary.
//
// Start skips the test when no Chromium is found, unless
// DOCKET_REQUIRE_BROWSER=1 (scripts/test.sh sets it), which makes it fail.
package webtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Flags are the Chromium flags every browser starts with: headless, no
// sandbox (tests run as root in CI), and no background traffic to the
// outside world (the machine's network is closed; the page is on loopback).
var Flags = []string{
	"--headless",
	"--no-sandbox",
	"--disable-gpu",
	"--disable-quic",
	"--no-first-run",
	"--no-default-browser-check",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--disable-extensions",
	"--disable-default-apps",
	"--mute-audio",
	"--password-store=basic",
	"--window-size=1280,1024",
	"--remote-debugging-pipe",
}

// callTimeout bounds one protocol call.
const callTimeout = 30 * time.Second

// Browser is a running headless Chromium that the test started.
type Browser struct {
	t      testing.TB
	cmd    *exec.Cmd
	w      *os.File // commands, Chromium's fd 3
	wmu    sync.Mutex
	stderr *tailBuffer
	exited chan struct{} // closed when the process has exited

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan message
	events  []message // every event received, in order
	readErr error     // why the reader stopped, once it has
}

// message is one protocol message: a response (ID set) or an event.
type message struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
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

// Start starts a headless Chromium with a fresh profile for the rest of the
// test and closes it when the test ends. Without a Chromium it skips the
// test, or fails it when Required.
func Start(t testing.TB) *Browser {
	t.Helper()
	bin, err := Find()
	if err != nil {
		if Required() {
			t.Fatalf("DOCKET_REQUIRE_BROWSER=1 but %v (scripts/test.sh installs Debian's chromium)", err)
		}
		t.Skipf("skipping the browser test: %v (install Debian's chromium, or run scripts/test.sh, which does)", err)
	}
	b, err := launch(t, bin)
	if err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(b.close)
	return b
}

// launch starts bin with the protocol on a pair of pipes.
func launch(t testing.TB, bin string) (*Browser, error) {
	cmdR, cmdW, err := os.Pipe() // we write commands, Chromium reads fd 3
	if err != nil {
		return nil, err
	}
	evR, evW, err := os.Pipe() // Chromium writes fd 4, we read
	if err != nil {
		cmdR.Close()
		cmdW.Close()
		return nil, err
	}
	args := append(append([]string{}, Flags...), "--user-data-dir="+t.TempDir(), "about:blank")
	// Not t.Context(): it ends before the cleanups run, and the failure
	// screenshot needs the browser; close ends it.
	cmd := exec.CommandContext(context.Background(), bin, args...)
	b := &Browser{
		t: t, cmd: cmd, w: cmdW, stderr: &tailBuffer{max: 64 << 10},
		exited: make(chan struct{}), pending: map[int64]chan message{},
	}
	b.cmd.ExtraFiles = []*os.File{cmdR, evW}
	b.cmd.Stdout, b.cmd.Stderr = b.stderr, b.stderr
	err = b.cmd.Start()
	cmdR.Close() // the child's ends
	evW.Close()
	if err != nil {
		cmdW.Close()
		evR.Close()
		return nil, err
	}
	go func() {
		_ = b.cmd.Wait()
		close(b.exited)
	}()
	go b.read(evR)
	if _, err := b.call("", "Browser.getVersion", nil); err != nil {
		b.close()
		return nil, fmt.Errorf("no answer on the DevTools pipe: %w\n%s", err, b.stderr)
	}
	return b, nil
}

// read dispatches messages until the pipe closes.
func (b *Browser) read(r *os.File) {
	defer r.Close()
	br := bufio.NewReaderSize(r, 1<<20)
	var err error
	for {
		var raw []byte
		raw, err = br.ReadBytes(0)
		if err != nil {
			break
		}
		var m message
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch, ok := b.pending[m.ID]; ok {
				delete(b.pending, m.ID)
				ch <- m
			}
		} else {
			b.events = append(b.events, m)
		}
		b.mu.Unlock()
	}
	b.mu.Lock()
	b.readErr = fmt.Errorf("DevTools pipe closed: %w", err)
	for id, ch := range b.pending {
		delete(b.pending, id)
		close(ch)
	}
	b.mu.Unlock()
}

// call sends one command (to the browser when session is "", else to that
// page's session) and returns its result.
func (b *Browser) call(session, method string, params any) (json.RawMessage, error) {
	p := []byte("{}")
	if params != nil {
		var err error
		if p, err = json.Marshal(params); err != nil {
			return nil, err
		}
	}
	b.mu.Lock()
	if b.readErr != nil {
		b.mu.Unlock()
		return nil, b.readErr
	}
	b.nextID++
	id := b.nextID
	ch := make(chan message, 1)
	b.pending[id] = ch
	b.mu.Unlock()

	raw, _ := json.Marshal(struct {
		ID        int64           `json:"id"`
		Method    string          `json:"method"`
		Params    json.RawMessage `json:"params"`
		SessionID string          `json:"sessionId,omitempty"`
	}{id, method, p, session})
	b.wmu.Lock() // one message at a time on the pipe
	_, err := b.w.Write(append(raw, 0))
	b.wmu.Unlock()
	if err != nil {
		b.mu.Lock()
		delete(b.pending, id)
		b.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	timer := time.NewTimer(callTimeout)
	defer timer.Stop()
	select {
	case m, ok := <-ch:
		if !ok {
			b.mu.Lock()
			defer b.mu.Unlock()
			return nil, fmt.Errorf("%s: %w", method, b.readErr)
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		return m.Result, nil
	case <-timer.C:
		b.mu.Lock()
		delete(b.pending, id)
		b.mu.Unlock()
		return nil, fmt.Errorf("%s: no answer within %s", method, callTimeout)
	}
}

// eventsOf returns the events received for session so far.
func (b *Browser) eventsOf(session string) []message {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []message
	for _, m := range b.events {
		if m.SessionID == session {
			out = append(out, m)
		}
	}
	return out
}

// close asks Chromium to quit, and kills it (by its PID) if it has not
// exited within a few seconds.
func (b *Browser) close() {
	select {
	case <-b.exited:
	default:
		go func() { _, _ = b.call("", "Browser.close", nil) }()
		select {
		case <-b.exited:
		case <-time.After(10 * time.Second):
			_ = b.cmd.Process.Kill()
			<-b.exited
		}
	}
	b.w.Close()
	if b.t.Failed() {
		b.t.Logf("chromium output (tail):\n%s", b.stderr)
	}
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
