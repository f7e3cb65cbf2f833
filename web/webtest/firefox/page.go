package firefox

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/web/webtest/bidi"
)

// Page is one Firefox tab, attached to the test that opened it. Its
// methods fail the test on error; selectors are CSS selectors.
type Page struct {
	t   testing.TB
	b   *Browser
	tab string // the browsing context
}

// NewPage opens a blank tab. When the test fails, the tab's screenshot is
// saved (see screenshotDir) and what its scripts logged is
// printed.
func (b *Browser) NewPage(t testing.TB) *Page {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	tab, err := b.conn.ContextCreate(ctx)
	if err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	p := &Page{t: t, b: b, tab: tab}
	t.Cleanup(p.onFailure)
	return p
}

// ctx bounds one call.
func (p *Page) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), callTimeout)
}

// Navigate loads url and waits until the document has loaded.
func (p *Page) Navigate(url string) {
	p.t.Helper()
	ctx, cancel := p.ctx()
	defer cancel()
	if err := p.b.conn.Navigate(ctx, p.tab, url); err != nil {
		p.t.Fatalf("navigate to %s: %v", url, err)
	}
}

// Reload reloads the page and waits until it has loaded again.
func (p *Page) Reload() {
	p.t.Helper()
	ctx, cancel := p.ctx()
	defer cancel()
	if err := p.b.conn.Reload(ctx, p.tab); err != nil {
		p.t.Fatalf("reload: %v", err)
	}
}

// Eval evaluates a JavaScript expression in the page (awaiting it when it
// is a promise) and stores its JSON value in v (unless v is nil).
func (p *Page) Eval(expr string, v any) {
	p.t.Helper()
	if err := p.eval(expr, v); err != nil {
		p.t.Fatal(err)
	}
}

// eval returns the expression's value through JSON.stringify in the page,
// so that v gets plain JSON rather than the protocol's serialization.
func (p *Page) eval(expr string, v any) error {
	ctx, cancel := p.ctx()
	defer cancel()
	wrapped := "(async () => { const v = await (" + expr + "\n); return v === undefined ? undefined : JSON.stringify(v); })()"
	res, err := p.b.conn.Evaluate(ctx, p.tab, wrapped)
	if err != nil {
		return fmt.Errorf("evaluate %.80q: %w", expr, err)
	}
	if v == nil || res.Type != "string" {
		return nil
	}
	return json.Unmarshal([]byte(res.String()), v)
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

// element returns a reference to the first element matching selector,
// scrolled to the middle of the viewport.
func (p *Page) element(selector string) map[string]string {
	p.t.Helper()
	ctx, cancel := p.ctx()
	defer cancel()
	v, err := p.b.conn.CallFunction(ctx, p.tab, `(sel) => {
		const e = document.querySelector(sel);
		if (e) e.scrollIntoView({block: "center", inline: "center"});
		return e;
	}`, selector)
	if err != nil {
		p.t.Fatalf("find %s: %v", selector, err)
	}
	ref, ok := v.Reference()
	if !ok {
		p.t.Fatalf("no element matches %s", selector)
	}
	return ref
}

// Click moves the mouse to the middle of the element and clicks it, as a
// user would.
func (p *Page) Click(selector string) {
	p.t.Helper()
	ref := p.element(selector)
	ctx, cancel := p.ctx()
	defer cancel()
	if err := p.b.conn.Click(ctx, p.tab, ref); err != nil {
		p.t.Fatalf("click %s: %v", selector, err)
	}
}

// Type focuses the element, selects what it holds and types text over it,
// a key at a time.
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
	ctx, cancel := p.ctx()
	defer cancel()
	if err := p.b.conn.Type(ctx, p.tab, text); err != nil {
		p.t.Fatalf("type into %s: %v", selector, err)
	}
}

// SetFiles chooses files in a file input, as the file picker would.
func (p *Page) SetFiles(selector string, paths ...string) {
	p.t.Helper()
	ref := p.element(selector)
	ctx, cancel := p.ctx()
	defer cancel()
	if err := p.b.conn.SetFiles(ctx, p.tab, ref, paths...); err != nil {
		p.t.Fatalf("set files of %s: %v", selector, err)
	}
}

// Screenshot saves a PNG of the whole page to path.
func (p *Page) Screenshot(path string) error {
	ctx, cancel := p.ctx()
	defer cancel()
	png, err := p.b.conn.Screenshot(ctx, p.tab)
	if err != nil {
		return err
	}
	return os.WriteFile(path, png, 0o644)
}

// Log returns what the page logged so far (console calls, uncaught
// exceptions, Content-Security-Policy violations), in order.
func (p *Page) Log() []bidi.LogEntry { return p.b.logOf(p.tab) }

// Errors returns the page's log entries of level error so far, one line
// each.
func (p *Page) Errors() []string {
	var out []string
	for _, e := range p.Log() {
		if e.Level == "error" {
			out = append(out, e.String())
		}
	}
	return out
}

// onFailure saves a screenshot and prints the page's log if the test failed.
func (p *Page) onFailure() {
	if !p.t.Failed() {
		return
	}
	if log := p.Log(); len(log) > 0 {
		lines := make([]string, len(log))
		for i, e := range log {
			lines[i] = e.String()
		}
		p.t.Logf("page log:\n  %s", strings.Join(lines, "\n  "))
	}
	dir, err := screenshotDir(p.t)
	if err == nil {
		path := filepath.Join(dir, sanitize(p.t.Name())+"-firefox.png")
		if err = p.Screenshot(path); err == nil {
			p.t.Logf("screenshot of the page: %s", path)
			return
		}
	}
	p.t.Logf("no screenshot: %v", err)
}

// screenshotDir is where a failed test's screenshot goes: its artifact
// directory under go test -artifacts, else a new directory under the
// system's temporary directory that is kept (its path is logged), as for
// the Chromium tests.
func screenshotDir(t testing.TB) (string, error) {
	if f := flag.Lookup("test.artifacts"); f != nil && f.Value.String() == "true" {
		if a, ok := t.(interface{ ArtifactDir() string }); ok {
			return a.ArtifactDir(), nil
		}
	}
	return os.MkdirTemp("", "docket-browser-test-")
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
