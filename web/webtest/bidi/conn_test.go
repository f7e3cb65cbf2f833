package bidi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/websocket"

	"github.com/docketq/docket/web/webtest/bidi"
)

// These tests hold the client to the protocol's framing against a local
// WebSocket endpoint that answers as a browser would, including what a
// browser does rarely (answers out of order, errors, going away mid-call).
// The firefox package's tests run the client against a real Firefox.

type command struct {
	ID     int64           `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// serve starts an endpoint that hands each connection's commands to
// handle, and returns a client connected to it.
func serve(t *testing.T, handle func(ws *websocket.Conn, cmds <-chan command)) *bidi.Conn {
	t.Helper()
	var wg sync.WaitGroup
	srv := httptest.NewServer(websocket.Handler(func(ws *websocket.Conn) {
		wg.Add(1)
		defer wg.Done()
		cmds := make(chan command)
		go func() {
			defer close(cmds)
			for {
				var c command
				if err := websocket.JSON.Receive(ws, &c); err != nil {
					return
				}
				cmds <- c
			}
		}()
		handle(ws, cmds)
		_ = ws.Close()
		for range cmds { // until the reader above has ended
		}
	}))
	t.Cleanup(func() {
		srv.Close()
		wg.Wait()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := bidi.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/session", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func send(t *testing.T, ws *websocket.Conn, msg string) {
	t.Helper()
	if err := websocket.Message.Send(ws, msg); err != nil {
		t.Error(err)
	}
}

// Answers are matched to their calls by id, whatever their order, and an
// event goes to its handler.
func TestConn_AnswersByID(t *testing.T) {
	t.Parallel()
	events := make(chan string, 1)
	c := serve(t, func(ws *websocket.Conn, cmds <-chan command) {
		a, b := <-cmds, <-cmds
		send(t, ws, `{"type":"event","method":"log.entryAdded","params":{"type":"console","level":"error","text":"boom","source":{"context":"tab1"}}}`)
		for _, cmd := range []command{b, a} { // the second first
			res, _ := json.Marshal(map[string]any{"type": "success", "id": cmd.ID, "result": map[string]any{"context": cmd.Method}})
			send(t, ws, string(res))
		}
		<-cmds // until the client goes
	})
	c.OnLog(func(e bidi.LogEntry) { events <- e.Source.Context + " " + e.Level + " " + e.Text })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := make([]string, 2)
	var wg sync.WaitGroup
	for i, method := range []string{"browsingContext.create", "other.method"} {
		wg.Go(func() {
			var out struct{ Context string }
			if err := c.Call(ctx, method, nil, &out); err != nil {
				t.Error(err)
			}
			got[i] = out.Context
		})
	}
	wg.Wait()
	if got[0] != "browsingContext.create" || got[1] != "other.method" {
		t.Errorf("results %q, want each call's own", got)
	}
	if e := <-events; e != "tab1 error boom" {
		t.Errorf("event %q", e)
	}
}

// An error answer is an *Error naming the command and the code.
func TestConn_ErrorAnswer(t *testing.T) {
	t.Parallel()
	c := serve(t, func(ws *websocket.Conn, cmds <-chan command) {
		cmd := <-cmds
		res, _ := json.Marshal(map[string]any{"type": "error", "id": cmd.ID, "error": "no such element", "message": "gone"})
		send(t, ws, string(res))
		<-cmds
	})
	err := c.Call(context.Background(), "input.setFiles", map[string]any{}, nil)
	var be *bidi.Error
	if !errors.As(err, &be) || be.Command != "input.setFiles" || be.Code != "no such element" || be.Message != "gone" {
		t.Errorf("error %#v, want the browser's error of input.setFiles", err)
	}
}

// A browser that goes away fails the call waiting for it, and every later
// one, with ErrClosed, instead of leaving it waiting.
func TestConn_ClosedMidCall(t *testing.T) {
	t.Parallel()
	c := serve(t, func(_ *websocket.Conn, cmds <-chan command) { <-cmds })
	if err := c.Call(context.Background(), "browser.close", nil, nil); !errors.Is(err, bidi.ErrClosed) {
		t.Errorf("call as the connection ends: %v, want ErrClosed", err)
	}
	<-c.Done()
	if err := c.Call(context.Background(), "session.status", nil, nil); !errors.Is(err, bidi.ErrClosed) {
		t.Errorf("call after the end: %v, want ErrClosed", err)
	}
}

// A call gives up when its context ends; the connection stays usable.
func TestConn_CallContext(t *testing.T) {
	t.Parallel()
	c := serve(t, func(ws *websocket.Conn, cmds <-chan command) {
		<-cmds // never answered
		cmd := <-cmds
		send(t, ws, `{"type":"success","id":`+jsonInt(cmd.ID)+`,"result":{}}`)
		<-cmds
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Call(ctx, "script.evaluate", nil, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
	if err := c.Call(context.Background(), "session.status", nil, nil); err != nil {
		t.Errorf("the next call: %v", err)
	}
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
