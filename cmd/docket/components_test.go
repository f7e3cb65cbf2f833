package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"
)

// A component that fails, or returns on its own, shuts the process down
// with its error; before, serve went on serving without it until a signal.
func TestRunComponents_OneFailsAllStop(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.DiscardHandler)
	boom := errors.New("worker: store gone")
	blocking := func(ctx context.Context) error { <-ctx.Done(); return nil }
	for _, tc := range []struct {
		name string
		runs []func(context.Context) error
		ln   func(t *testing.T) net.Listener
		want error
	}{
		{"ComponentFails", []func(context.Context) error{blocking, func(context.Context) error { return boom }}, listen, boom},
		{"ComponentReturns", []func(context.Context) error{blocking, func(context.Context) error { return nil }}, listen, errStopped},
		{"ListenerFails", []func(context.Context) error{blocking}, func(t *testing.T) net.Listener {
			ln := listen(t)
			ln.Close()
			return ln
		}, net.ErrClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				done <- runComponents(t.Context(), logger, &http.Server{Handler: http.NotFoundHandler(), ErrorLog: nil}, tc.ln(t), tc.runs...)
			}()
			select {
			case err := <-done:
				if !errors.Is(err, tc.want) {
					t.Errorf("runComponents = %v, want %v", err, tc.want)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("runComponents still running after a component stopped")
			}
		})
	}
	// Shutdown by the context is no error.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := runComponents(ctx, logger, &http.Server{Handler: http.NotFoundHandler()}, listen(t), blocking); err != nil {
		t.Errorf("runComponents after cancel = %v, want nil", err)
	}
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}
