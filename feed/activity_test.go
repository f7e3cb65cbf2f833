package feed_test

import (
	"context"
	"testing"
	"time"

	"github.com/docketq/docket/feed"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// signalled waits for a signal on ch, failing t after waitFor.
func signalled(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case _, ok := <-ch:
		if !ok {
			t.Fatalf("%s: the watch ended", what)
		}
	case <-time.After(waitFor):
		t.Fatalf("%s: no signal", what)
	}
}

// drain takes a pending signal, if any.
func drain(ch <-chan struct{}) {
	select {
	case <-ch:
	default:
	}
}

// TestFeed_Watch: a watcher hears of a change of any tenant's job in this
// process, though no tenant is subscribed, and of one made by another
// process through its notification (the poll is an hour); its channel is
// closed by stop, and by Run's return.
func TestFeed_Watch(t *testing.T) {
	verifyNoLeaks(t)
	db := pgtest.NewDatabase(t)
	client := queue.NewClient(newPGDriver(t, db), queue.ClientConfig{})
	other := queue.NewClient(newPGDriver(t, db), queue.ClientConfig{})
	f := feed.New(feed.Config{Client: client, Queue: testQueue, PollInterval: time.Hour})
	runCtx, stopRun := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- f.Run(runCtx) }()
	ran := false
	defer func() {
		if !ran {
			stopRun()
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	}()

	sig, stop := f.Watch()
	enqueue(t, client, "acme", "here", 0)
	signalled(t, sig, "a job enqueued in this process")

	awaitListening(t, f, other)
	drain(sig)
	enqueue(t, other, "globex", "there", 0)
	signalled(t, sig, "a job enqueued by another process")

	stop()
	ended(t, sig, "after stop")
	stop() // a second stop is harmless

	sig2, stop2 := f.Watch()
	defer stop2()
	stopRun()
	ran = true
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ended(t, sig2, "after Run returned")
	late, stopLate := f.Watch()
	defer stopLate()
	ended(t, late, "begun after Run returned")
}

// ended fails t unless ch is closed (after at most one pending signal).
func ended(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	for range 2 {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-time.After(waitFor):
		}
	}
	t.Errorf("the watch %s is open", what)
}
