// Package bidi is a small WebDriver BiDi client
// (https://w3c.github.io/webdriver-bidi/) for the dashboard's browser tests
// in Firefox, which speaks the protocol natively: started with
// --remote-debugging-port it listens on a loopback WebSocket, and no
// geckodriver is needed.
//
// A Conn sends commands and matches their answers by id; events go to the
// handlers registered with Handle. The typed commands (commands.go) cover
// what the tests use: session.new and session.subscribe,
// browsingContext.create, navigate, reload, captureScreenshot and close,
// script.evaluate and script.callFunction, input.performActions and
// input.setFiles, log.entryAdded events, and browser.close.
//
// The WebSocket is golang.org/x/net/websocket, already a dependency of the
// module. It reads one frame per message, which is how Firefox sends them
// (it does not fragment); a fragmented message would fail to decode, loudly.
package bidi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/net/websocket"
)

// maxMessage bounds one message from the browser (a full-page screenshot
// of a long page is a few megabytes of base64).
const maxMessage = 64 << 20

// Error is a command's error answer.
type Error struct {
	Command string // the command's method, e.g. "script.evaluate"
	Code    string // the protocol's error code, e.g. "no such element"
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("bidi %s: %s: %s", e.Command, e.Code, e.Message)
}

// ErrClosed is returned by calls on a connection that has ended.
var ErrClosed = errors.New("bidi: connection closed")

// Conn is one WebDriver BiDi connection. Its methods are safe for
// concurrent use.
type Conn struct {
	ws   *websocket.Conn
	done chan struct{} // closed when the reader ends

	mu       sync.Mutex
	nextID   int64
	pending  map[int64]chan reply
	handlers map[string][]func(json.RawMessage)
	err      error // why the reader ended
}

type reply struct {
	result json.RawMessage
	err    error
}

// message is any message from the browser: a command's answer (success or
// error) or an event.
type message struct {
	Type    string          `json:"type"`
	ID      *int64          `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   string          `json:"error"`
	Message string          `json:"message"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// Dial connects to a BiDi endpoint, e.g. ws://127.0.0.1:PORT/session as
// Firefox prints it (with /session appended). x/net/websocket always sends
// an Origin header; origin is it, e.g. "http://127.0.0.1", and Firefox
// accepts it only when started with --remote-allow-origins=ORIGIN (a
// connection from a web page would carry the page's origin).
func Dial(ctx context.Context, endpoint, origin string) (*Conn, error) {
	cfg, err := websocket.NewConfig(endpoint, origin)
	if err != nil {
		return nil, fmt.Errorf("bidi: %w", err)
	}
	ws, err := cfg.DialContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("bidi: dial %s: %w", endpoint, err)
	}
	ws.MaxPayloadBytes = maxMessage
	c := &Conn{
		ws:       ws,
		done:     make(chan struct{}),
		pending:  map[int64]chan reply{},
		handlers: map[string][]func(json.RawMessage){},
	}
	go c.read()
	return c, nil
}

// Handle registers fn for the events named method (e.g. "log.entryAdded").
// Handlers run on the connection's reader, in the order events arrive:
// they must return quickly and must not call the connection. An event is
// sent only once subscribed to (Session.Subscribe).
func (c *Conn) Handle(method string, fn func(params json.RawMessage)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.handlers[method] = append(c.handlers[method], fn)
}

// Call sends the command method with params and stores its result in
// result (unless nil). It returns an *Error for the browser's error
// answer, and ErrClosed (wrapped) once the connection has ended.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	if params == nil {
		params = struct{}{}
	}
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return fmt.Errorf("bidi %s: %w", method, err)
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()

	msg, err := json.Marshal(struct {
		ID     int64  `json:"id"`
		Method string `json:"method"`
		Params any    `json:"params"`
	}{id, method, params})
	if err != nil {
		return fmt.Errorf("bidi %s: %w", method, err)
	}
	if err := websocket.Message.Send(c.ws, string(msg)); err != nil {
		return fmt.Errorf("bidi %s: send: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			var be *Error
			if errors.As(r.err, &be) {
				be.Command = method
				return be
			}
			return fmt.Errorf("bidi %s: %w", method, r.err)
		}
		if result == nil {
			return nil
		}
		if err := json.Unmarshal(r.result, result); err != nil {
			return fmt.Errorf("bidi %s: decode result: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("bidi %s: %w", method, ctx.Err())
	}
}

// Done is closed when the connection has ended (Close, or the browser
// went away).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Close ends the connection and waits for its reader.
func (c *Conn) Close() error {
	err := c.ws.Close()
	<-c.done
	return err
}

// read delivers answers and events until the connection ends, then fails
// the calls still waiting.
func (c *Conn) read() {
	defer close(c.done)
	var err error
	for {
		var raw []byte
		if err = websocket.Message.Receive(c.ws, &raw); err != nil {
			break
		}
		var m message
		if err = json.Unmarshal(raw, &m); err != nil {
			err = fmt.Errorf("decode message: %w", err)
			break
		}
		c.dispatch(&m)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = fmt.Errorf("%w: %w", ErrClosed, err)
	for id, ch := range c.pending {
		ch <- reply{err: c.err}
		delete(c.pending, id)
	}
}

func (c *Conn) dispatch(m *message) {
	c.mu.Lock()
	if m.Type == "event" {
		hs := c.handlers[m.Method]
		c.mu.Unlock()
		for _, h := range hs {
			h(m.Params)
		}
		return
	}
	var ch chan reply
	if m.ID != nil {
		ch = c.pending[*m.ID]
	}
	c.mu.Unlock()
	if ch == nil {
		return // an answer nobody waits for any more (its call gave up)
	}
	switch m.Type {
	case "success":
		ch <- reply{result: m.Result}
	default:
		ch <- reply{err: &Error{Code: m.Error, Message: m.Message}}
	}
}
