package foreground

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestGate_WaitsForRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Gate
		if err := g.Wait(t.Context(), time.Second); err != nil {
			t.Fatal(err)
		}
		leave := g.Enter()
		done := make(chan time.Time)
		start := time.Now()
		go func() {
			_ = g.Wait(t.Context(), time.Second)
			done <- time.Now()
		}()
		time.Sleep(30 * time.Millisecond)
		leave()
		if took := (<-done).Sub(start); took < 30*time.Millisecond || took > 40*time.Millisecond {
			t.Errorf("Wait returned after %v, want soon after the request left (30 ms)", took)
		}
	})
}

func TestGate_WaitIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Gate
		defer g.Enter()()
		start := time.Now()
		if err := g.Wait(t.Context(), 50*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took < 50*time.Millisecond || took > 60*time.Millisecond {
			t.Errorf("Wait returned after %v with a request in progress, want its bound (50 ms)", took)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := g.Wait(ctx, time.Second); !errors.Is(err, context.Canceled) {
			t.Errorf("Wait with an ended context: %v", err)
		}
	})
}

func TestGate_Nil(t *testing.T) {
	var g *Gate
	g.Enter()()
	if g.Busy() {
		t.Error("a nil gate is busy")
	}
	if err := g.Wait(t.Context(), time.Hour); err != nil {
		t.Error(err)
	}
}
