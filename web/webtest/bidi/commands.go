package bidi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// Capabilities are what session.new says of the browser.
type Capabilities struct {
	BrowserName    string `json:"browserName"`
	BrowserVersion string `json:"browserVersion"`
}

// SessionNew starts the connection's session (a connection to
// ws://…/session has none until then).
func (c *Conn) SessionNew(ctx context.Context) (Capabilities, error) {
	var out struct {
		Capabilities Capabilities `json:"capabilities"`
	}
	err := c.Call(ctx, "session.new", map[string]any{"capabilities": map[string]any{}}, &out)
	return out.Capabilities, err
}

// SessionSubscribe asks for the events named (e.g. "log.entryAdded") from
// every browsing context.
func (c *Conn) SessionSubscribe(ctx context.Context, events ...string) error {
	return c.Call(ctx, "session.subscribe", map[string]any{"events": events}, nil)
}

// BrowserClose closes every window and ends the browser and the session.
func (c *Conn) BrowserClose(ctx context.Context) error {
	return c.Call(ctx, "browser.close", nil, nil)
}

// ContextCreate opens a new tab and returns its browsing context id.
func (c *Conn) ContextCreate(ctx context.Context) (string, error) {
	var out struct {
		Context string `json:"context"`
	}
	err := c.Call(ctx, "browsingContext.create", map[string]any{"type": "tab"}, &out)
	return out.Context, err
}

// ContextClose closes a tab.
func (c *Conn) ContextClose(ctx context.Context, tab string) error {
	return c.Call(ctx, "browsingContext.close", map[string]any{"context": tab}, nil)
}

// Navigate loads url in the browsing context and waits until its document
// has loaded (readiness "complete").
func (c *Conn) Navigate(ctx context.Context, tab, url string) error {
	return c.Call(ctx, "browsingContext.navigate", map[string]any{"context": tab, "url": url, "wait": "complete"}, nil)
}

// Reload reloads the browsing context's document and waits until it has
// loaded again.
func (c *Conn) Reload(ctx context.Context, tab string) error {
	return c.Call(ctx, "browsingContext.reload", map[string]any{"context": tab, "wait": "complete"}, nil)
}

// Screenshot returns a PNG of the browsing context's whole document.
func (c *Conn) Screenshot(ctx context.Context, tab string) ([]byte, error) {
	var out struct {
		Data string `json:"data"`
	}
	if err := c.Call(ctx, "browsingContext.captureScreenshot", map[string]any{"context": tab, "origin": "document"}, &out); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(out.Data)
}

// RemoteValue is a value of the page as the protocol serializes it: a
// primitive's Value, or a node's SharedID (a Reference's target).
type RemoteValue struct {
	Type     string          `json:"type"`
	Value    json.RawMessage `json:"value,omitempty"`
	SharedID string          `json:"sharedId,omitempty"`
}

// Reference returns the shared reference to the node v is, for input
// commands and as an argument; ok is false when v is not a node.
func (v RemoteValue) Reference() (ref map[string]string, ok bool) {
	if v.Type != "node" || v.SharedID == "" {
		return nil, false
	}
	return map[string]string{"sharedId": v.SharedID}, true
}

// String returns v's value when it is a string, else "".
func (v RemoteValue) String() string {
	var s string
	if v.Type == "string" {
		_ = json.Unmarshal(v.Value, &s)
	}
	return s
}

// ScriptException is a script that threw (or whose promise rejected).
type ScriptException struct {
	Text string // the exception as the browser writes it, e.g. "TypeError: x is undefined"
}

func (e *ScriptException) Error() string { return "script threw: " + e.Text }

// scriptResult is the answer of script.evaluate and script.callFunction.
type scriptResult struct {
	Type             string      `json:"type"` // success or exception
	Result           RemoteValue `json:"result"`
	ExceptionDetails struct {
		Text string `json:"text"`
	} `json:"exceptionDetails"`
}

func (r *scriptResult) value() (RemoteValue, error) {
	if r.Type == "exception" {
		return RemoteValue{}, &ScriptException{Text: r.ExceptionDetails.Text}
	}
	return r.Result, nil
}

// Evaluate evaluates a JavaScript expression in the page's own realm of
// the browsing context, awaiting it when it is a promise, as if the user
// had started it (user activation: what a click allows). A script that
// throws returns a *ScriptException.
func (c *Conn) Evaluate(ctx context.Context, tab, expression string) (RemoteValue, error) {
	var out scriptResult
	err := c.Call(ctx, "script.evaluate", map[string]any{
		"expression":      expression,
		"target":          map[string]any{"context": tab},
		"awaitPromise":    true,
		"userActivation":  true,
		"resultOwnership": "none",
	}, &out)
	if err != nil {
		return RemoteValue{}, err
	}
	return out.value()
}

// CallFunction calls the JavaScript function declared by fn (e.g.
// "(sel) => document.querySelector(sel)") in the page's realm with string
// arguments, awaiting its promise, as Evaluate does.
func (c *Conn) CallFunction(ctx context.Context, tab, fn string, args ...string) (RemoteValue, error) {
	vals := make([]map[string]any, len(args))
	for i, a := range args {
		vals[i] = map[string]any{"type": "string", "value": a}
	}
	var out scriptResult
	err := c.Call(ctx, "script.callFunction", map[string]any{
		"functionDeclaration": fn,
		"arguments":           vals,
		"target":              map[string]any{"context": tab},
		"awaitPromise":        true,
		"userActivation":      true,
		"resultOwnership":     "none",
	}, &out)
	if err != nil {
		return RemoteValue{}, err
	}
	return out.value()
}

// SetFiles chooses files in the <input type=file> element (a node's
// Reference), as the file picker would: the page gets input and change
// events.
func (c *Conn) SetFiles(ctx context.Context, tab string, element map[string]string, paths ...string) error {
	return c.Call(ctx, "input.setFiles", map[string]any{"context": tab, "element": element, "files": paths}, nil)
}

// Click moves the mouse to the middle of the element (a node's Reference)
// and presses and releases its main button there.
func (c *Conn) Click(ctx context.Context, tab string, element map[string]string) error {
	return c.performActions(ctx, tab, map[string]any{
		"type": "pointer", "id": "mouse", "parameters": map[string]any{"pointerType": "mouse"},
		"actions": []map[string]any{
			{"type": "pointerMove", "x": 0, "y": 0, "origin": map[string]any{"type": "element", "element": element}},
			{"type": "pointerDown", "button": 0},
			{"type": "pointerUp", "button": 0},
		},
	})
}

// Type presses and releases a key for each character of text, into
// whatever has the focus.
func (c *Conn) Type(ctx context.Context, tab, text string) error {
	keys := make([]map[string]any, 0, 2*len(text))
	for _, r := range text {
		keys = append(keys, map[string]any{"type": "keyDown", "value": string(r)}, map[string]any{"type": "keyUp", "value": string(r)})
	}
	return c.performActions(ctx, tab, map[string]any{"type": "key", "id": "keyboard", "actions": keys})
}

func (c *Conn) performActions(ctx context.Context, tab string, source map[string]any) error {
	if err := c.Call(ctx, "input.performActions", map[string]any{"context": tab, "actions": []any{source}}, nil); err != nil {
		return err
	}
	// Release what is held, so that the next action starts clean.
	if err := c.Call(ctx, "input.releaseActions", map[string]any{"context": tab}, nil); err != nil {
		return fmt.Errorf("after the actions: %w", err)
	}
	return nil
}

// LogEntry is a log.entryAdded event: a console call (Type "console") or
// an uncaught exception or unhandled rejection (Type "javascript").
type LogEntry struct {
	Type   string `json:"type"`
	Level  string `json:"level"` // debug, info, warn or error
	Text   string `json:"text"`
	Method string `json:"method"` // the console method, e.g. "error"
	Source struct {
		Context string `json:"context"`
	} `json:"source"`
	StackTrace *struct {
		CallFrames []struct {
			URL        string `json:"url"`
			LineNumber int    `json:"lineNumber"`
		} `json:"callFrames"`
	} `json:"stackTrace"`
}

// String writes the entry on one line, with where it came from when known.
func (e LogEntry) String() string {
	s := fmt.Sprintf("%s %s: %s", e.Type, e.Level, e.Text)
	if e.StackTrace != nil && len(e.StackTrace.CallFrames) > 0 {
		f := e.StackTrace.CallFrames[0]
		s += fmt.Sprintf(" (%s:%d)", f.URL, f.LineNumber+1)
	}
	return s
}

// OnLog registers fn for every log entry (after SessionSubscribe with
// "log.entryAdded"); fn runs as Handle's handlers do.
func (c *Conn) OnLog(fn func(LogEntry)) {
	c.Handle("log.entryAdded", func(params json.RawMessage) {
		var e LogEntry
		if err := json.Unmarshal(params, &e); err != nil {
			e = LogEntry{Type: "undecodable", Level: "error", Text: fmt.Sprintf("%v: %s", err, params)}
		}
		fn(e)
	})
}
