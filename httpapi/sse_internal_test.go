package httpapi

import (
	"net/http"
	"os"
	"sync"
	"testing"
	"time"
)

// stuckWriter is a connection whose client does not read: a write blocks
// until the write deadline, then fails as net/http's would.
type stuckWriter struct {
	http.ResponseWriter
	mu       sync.Mutex
	deadline time.Time
}

func (w *stuckWriter) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deadline = t
	return nil
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	d := w.deadline
	w.mu.Unlock()
	if d.IsZero() {
		select {} // what a client that never reads does to a write without a deadline
	}
	time.Sleep(time.Until(d))
	return 0, os.ErrDeadlineExceeded
}

func (w *stuckWriter) Flush() {}

// A client that does not read makes the stream's write fail within
// StreamWriteTimeout instead of holding the handler (and the buffered
// events) forever.
func TestSSEWriter_ClientNotReading(t *testing.T) {
	t.Parallel()
	w := &stuckWriter{}
	sse := &sseWriter{w: w, rc: http.NewResponseController(w), timeout: 50 * time.Millisecond}
	sse.buf.WriteString(": keep-alive\n\n")
	done := make(chan error, 1)
	go func() { done <- sse.flush() }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a write to a client that does not read succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a write to a client that does not read still blocked after 10s")
	}
}
