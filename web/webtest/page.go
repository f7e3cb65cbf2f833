package webtest

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Page is one browser tab, attached to the test that opened it. Its methods
// fail the test on error; selectors are CSS selectors.
type Page struct {
	t   testing.TB
	ctx context.Context

	mu      sync.Mutex
	console []chromedp.ConsoleMessage // every message so far, in order
}

// NewPage opens a blank tab. When the test fails, the tab's screenshot is
// saved (see ScreenshotDir) and what its scripts logged is printed.
func (b *Browser) NewPage(t testing.TB) *Page {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	p := &Page{t: t, ctx: ctx}
	if err := chromedp.Do(ctx); err != nil { // opens the tab
		cancel()
		t.Fatalf("open a tab: %v", err)
	}
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			p.mu.Lock()
			p.console = append(p.console, m)
			p.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		p.onFailure()
		cancel()
		<-done
	})
	return p
}

// do runs actions within callTimeout, failing the test on error.
func (p *Page) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, callTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

// Navigate loads url and waits until the document has loaded.
func (p *Page) Navigate(url string) {
	p.t.Helper()
	p.do("navigate to "+url, chromedp.Navigate(url))
	p.WaitFor("the page to load", `document.readyState === "complete" && location.href !== "about:blank"`, 30*time.Second)
}

// Reload reloads the page and waits until it has loaded again.
func (p *Page) Reload() {
	p.t.Helper()
	p.Eval(`window.__webtestBeforeReload = true`, nil)
	p.do("reload", chromedp.Reload())
	p.WaitFor("the page to load again", `!window.__webtestBeforeReload && document.readyState === "complete"`, 30*time.Second)
}

// Eval evaluates a JavaScript expression in the page (awaiting it when it
// is a promise) and stores its JSON value in v (unless v is nil).
func (p *Page) Eval(expr string, v any) {
	p.t.Helper()
	if err := p.eval(expr, v); err != nil {
		p.t.Fatal(err)
	}
}

// userGesture runs an evaluation as if the user had started it.
func userGesture(e *runtime.EvaluateParams) { t := true; e.UserGesture = &t }

func (p *Page) eval(expr string, v any) error {
	ctx, cancel := context.WithTimeout(p.ctx, callTimeout)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise, userGesture))
	if err != nil {
		return fmt.Errorf("evaluate %.80q: %w", expr, err)
	}
	if v == nil || len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// WaitFor polls the JavaScript expression cond until it is truthy, and
// fails the test, naming what, if it is not within the time given.
func (p *Page) WaitFor(what, cond string, within time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(within)
	for {
		var ok bool
		last := p.eval("!!("+cond+")", &ok)
		if last == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			if last != nil {
				p.t.Fatalf("waited %s for %s: %v", within, what, last)
			}
			p.t.Fatalf("waited %s for %s; the page shows:\n%s", within, what, p.Text("body"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Text returns the rendered text of the first element matching selector
// ("" if none does).
func (p *Page) Text(selector string) string {
	p.t.Helper()
	var s string
	p.Eval(fmt.Sprintf(`(document.querySelector(%s) || {innerText: ""}).innerText`, jsString(selector)), &s)
	return s
}

// Click moves the mouse to the middle of the element and clicks it, as a
// user would: the element must be visible.
func (p *Page) Click(selector string) {
	p.t.Helper()
	p.do("click "+selector, chromedp.Click(chromedp.CSS(selector), chromedp.NodeVisible))
}

// Press sends keys to the focused element as key events ("\r" is Enter):
// unlike Click, it does not aim at coordinates, which a layout still
// moving (cards growing as events arrive) can shift under the pointer.
func (p *Page) Press(keys string) {
	p.t.Helper()
	p.do(fmt.Sprintf("press %q", keys), chromedp.KeyEvent(keys))
}

// Type focuses the element, selects what it holds and types text over it
// (one input event, as when pasting).
func (p *Page) Type(selector, text string) {
	p.t.Helper()
	var found bool
	p.Eval(fmt.Sprintf(`(() => {
		const e = document.querySelector(%s);
		if (!e) return false;
		e.focus();
		if (e.select) e.select();
		return document.activeElement === e;
	})()`, jsString(selector)), &found)
	if !found {
		p.t.Fatalf("type: no focusable element matches %s", selector)
	}
	p.do("type into "+selector, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: text})
		return err
	}))
}

// ReduceMotion makes the page see prefers-reduced-motion: reduce, so that
// what it shows is not caught halfway through a transition.
func (p *Page) ReduceMotion() {
	p.t.Helper()
	p.do("emulate reduced motion", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}},
		})
		return err
	}))
}

// Viewport sets the page's viewport, as a phone's when mobile.
func (p *Page) Viewport(width, height int64, mobile bool) {
	p.t.Helper()
	var opts []chromedp.EmulateViewportOption
	if mobile {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateScale(2))
	}
	p.do("set the viewport", chromedp.EmulateViewport(width, height, opts...))
}

// SetFiles chooses files in a file input, as the file picker would.
func (p *Page) SetFiles(selector string, paths ...string) {
	p.t.Helper()
	p.do("set files of "+selector, chromedp.SetUploadFiles(chromedp.CSS(selector), paths, chromedp.NodeReady))
}

// DropFiles drags files from outside the browser onto the middle of the
// element and drops them there, as a user dragging them from a file manager
// would: the page gets dragenter, dragover and drop events with the files.
func (p *Page) DropFiles(selector string, paths ...string) {
	p.t.Helper()
	var at *struct{ X, Y float64 }
	p.Eval(fmt.Sprintf(`(() => {
		const e = document.querySelector(%s);
		if (!e) return null;
		e.scrollIntoView({block: "center"});
		const r = e.getBoundingClientRect();
		return {X: r.x + r.width / 2, Y: r.y + r.height / 2};
	})()`, jsString(selector)), &at)
	if at == nil {
		p.t.Fatalf("drop files: no element matches %s", selector)
	}
	data := &input.DragData{Items: []*input.DragDataItem{}, Files: paths, DragOperationsMask: 1}
	p.do("drop files on "+selector, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, typ := range []input.DispatchDragEventType{
			input.DispatchDragEventTypeDragEnter, input.DispatchDragEventTypeDragOver, input.DispatchDragEventTypeDrop,
		} {
			_, err := cdp.Call(ctx, t, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: at.X, Y: at.Y, Data: data})
			if err != nil {
				return err
			}
		}
		return nil
	}))
}

// Screenshot saves a PNG of the whole page to path.
func (p *Page) Screenshot(path string) error {
	ctx, cancel := context.WithTimeout(p.ctx, callTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return err
	}
	return os.WriteFile(path, png, 0o644)
}

// Exceptions returns the page's uncaught exceptions and unhandled promise
// rejections so far.
func (p *Page) Exceptions() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, m := range p.console {
		if m.IsException() {
			out = append(out, m.Text)
		}
	}
	return out
}

// Console returns what the page logged so far: console calls, browser log
// entries (failed requests, Content-Security-Policy violations) and
// exceptions, one line each.
func (p *Page) Console() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.console))
	for _, m := range p.console {
		line := m.String()
		if m.Source != "" {
			line = fmt.Sprintf("%s (%s): %s %s", m.Type, m.Source, m.Text, m.URL)
		}
		out = append(out, line)
	}
	return out
}

// ScreenshotDir is where a failed test's screenshot goes: its artifact
// directory under go test -artifacts, else a new directory under the
// system's temporary directory that is kept (its path is logged).
func ScreenshotDir(t testing.TB) (string, error) {
	if f := flag.Lookup("test.artifacts"); f != nil && f.Value.String() == "true" {
		if a, ok := t.(interface{ ArtifactDir() string }); ok {
			return a.ArtifactDir(), nil
		}
	}
	return os.MkdirTemp("", "docket-browser-test-")
}

// onFailure saves a screenshot and prints the page's log if the test failed.
func (p *Page) onFailure() {
	if !p.t.Failed() {
		return
	}
	if lines := p.Console(); len(lines) > 0 {
		p.t.Logf("page log:\n  %s", strings.Join(lines, "\n  "))
	}
	dir, err := ScreenshotDir(p.t)
	if err == nil {
		path := filepath.Join(dir, sanitize(p.t.Name())+".png")
		if err = p.Screenshot(path); err == nil {
			p.t.Logf("screenshot of the page: %s", path)
			return
		}
	}
	p.t.Logf("no screenshot: %v", err)
}

func sanitize(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == os.PathSeparator {
			return '_'
		}
		return r
	}, name)
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
