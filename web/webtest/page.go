package webtest

import (
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Page is one browser tab, attached to the test that opened it. Its methods
// fail the test on error; selectors are CSS selectors.
type Page struct {
	t       testing.TB
	b       *Browser
	session string
}

// NewPage opens a blank tab. When the test fails, the tab's screenshot is
// saved (see ScreenshotDir) and what its scripts logged is printed.
func (b *Browser) NewPage(t testing.TB) *Page {
	t.Helper()
	var target struct {
		TargetID string `json:"targetId"`
	}
	b.must(t, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	b.must(t, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	p := &Page{t: t, b: b, session: attached.SessionID}
	for _, domain := range []string{"Page.enable", "Runtime.enable", "Log.enable"} {
		b.must(t, p.session, domain, nil, nil)
	}
	t.Cleanup(p.onFailure)
	return p
}

func (b *Browser) must(t testing.TB, session, method string, params, result any) {
	t.Helper()
	raw, err := b.call(session, method, params)
	if err != nil {
		t.Fatal(err)
	}
	if result != nil {
		if err := json.Unmarshal(raw, result); err != nil {
			t.Fatalf("%s: %v in %s", method, err, raw)
		}
	}
}

// Navigate loads url and waits until the document has loaded.
func (p *Page) Navigate(url string) {
	p.t.Helper()
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	p.b.must(p.t, p.session, "Page.navigate", map[string]any{"url": url}, &nav)
	if nav.ErrorText != "" {
		p.t.Fatalf("navigate to %s: %s", url, nav.ErrorText)
	}
	p.WaitFor("the page to load", `document.readyState === "complete" && location.href !== "about:blank"`, 30*time.Second)
}

// Eval evaluates a JavaScript expression in the page (awaiting it when it
// is a promise) and stores its JSON value in v (unless v is nil).
func (p *Page) Eval(expr string, v any) {
	p.t.Helper()
	if err := p.eval(expr, v); err != nil {
		p.t.Fatal(err)
	}
}

func (p *Page) eval(expr string, v any) error {
	raw, err := p.b.call(p.session, "Runtime.evaluate", map[string]any{
		"expression": expr, "returnByValue": true, "awaitPromise": true, "userGesture": true,
	})
	if err != nil {
		return err
	}
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("evaluate: %w in %s", err, raw)
	}
	if e := res.ExceptionDetails; e != nil {
		return fmt.Errorf("evaluate %.80q: %s %s", expr, e.Text, e.Exception.Description)
	}
	if v == nil || len(res.Result.Value) == 0 {
		return nil
	}
	return json.Unmarshal(res.Result.Value, v)
}

// WaitFor polls the JavaScript expression cond until it is truthy, and
// fails the test, naming what, if it is not within the time given.
func (p *Page) WaitFor(what, cond string, within time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(within)
	var last error
	for {
		var ok bool
		last = p.eval("!!("+cond+")", &ok)
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
// user would: the element must be visible and not covered.
func (p *Page) Click(selector string) {
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
		p.t.Fatalf("click: no element matches %s", selector)
	}
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		p.b.must(p.t, p.session, "Input.dispatchMouseEvent", map[string]any{
			"type": typ, "x": at.X, "y": at.Y, "button": "left", "clickCount": 1,
		}, nil)
	}
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
	p.b.must(p.t, p.session, "Input.insertText", map[string]any{"text": text}, nil)
}

// SetFiles chooses files in a file input, as the file picker would.
func (p *Page) SetFiles(selector string, paths ...string) {
	p.t.Helper()
	var doc struct {
		Root struct {
			NodeID int `json:"nodeId"`
		} `json:"root"`
	}
	p.b.must(p.t, p.session, "DOM.getDocument", map[string]any{"depth": 0}, &doc)
	var q struct {
		NodeID int `json:"nodeId"`
	}
	p.b.must(p.t, p.session, "DOM.querySelector", map[string]any{"nodeId": doc.Root.NodeID, "selector": selector}, &q)
	if q.NodeID == 0 {
		p.t.Fatalf("set files: no element matches %s", selector)
	}
	p.b.must(p.t, p.session, "DOM.setFileInputFiles", map[string]any{"nodeId": q.NodeID, "files": paths}, nil)
}

// Screenshot saves a PNG of the whole page to path.
func (p *Page) Screenshot(path string) error {
	raw, err := p.b.call(p.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true})
	if err != nil {
		return err
	}
	var shot struct {
		Data string `json:"data"`
	}
	if err := json.Unmarshal(raw, &shot); err != nil {
		return err
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		return err
	}
	return os.WriteFile(path, png, 0o644)
}

// Exceptions returns the page's uncaught exceptions and unhandled promise
// rejections so far.
func (p *Page) Exceptions() []string {
	var out []string
	for _, m := range p.b.eventsOf(p.session) {
		if m.Method != "Runtime.exceptionThrown" {
			continue
		}
		var e struct {
			Details struct {
				Text      string `json:"text"`
				Exception struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
		}
		_ = json.Unmarshal(m.Params, &e)
		out = append(out, strings.TrimSpace(e.Details.Text+" "+e.Details.Exception.Description))
	}
	return out
}

// Console returns what the page logged so far: console calls, browser log
// entries (failed requests, Content-Security-Policy violations) and
// exceptions, one line each.
func (p *Page) Console() []string {
	var out []string
	for _, m := range p.b.eventsOf(p.session) {
		switch m.Method {
		case "Runtime.consoleAPICalled":
			var c struct {
				Type string `json:"type"`
				Args []struct {
					Value       any    `json:"value"`
					Description string `json:"description"`
				} `json:"args"`
			}
			_ = json.Unmarshal(m.Params, &c)
			line := "console." + c.Type + ":"
			for _, a := range c.Args {
				if a.Value != nil {
					line += fmt.Sprint(" ", a.Value)
				} else {
					line += " " + a.Description
				}
			}
			out = append(out, line)
		case "Log.entryAdded":
			var l struct {
				Entry struct{ Level, Source, Text, URL string } `json:"entry"`
			}
			_ = json.Unmarshal(m.Params, &l)
			out = append(out, fmt.Sprintf("%s (%s): %s %s", l.Entry.Level, l.Entry.Source, l.Entry.Text, l.Entry.URL))
		case "Runtime.exceptionThrown":
			out = append(out, "uncaught exception (see Exceptions)")
		}
	}
	return append(out, p.Exceptions()...)
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
