package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// waitQueued waits until the turns hold fg and bg waiters.
func waitQueued(t *testing.T, w *writeTurns, fg, bg int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		w.mu.Lock()
		f, b := len(w.fg), len(w.bg)
		w.mu.Unlock()
		if f == fg && b == bg {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiters %d and %d in the background, want %d and %d", f, b, fg, bg)
		}
		time.Sleep(time.Millisecond)
	}
}

// Turns go in arrival order, except that a background waiter lets every
// other go first until it has waited maxBackgroundWait.
func TestWriteTurns_Order(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Unix(0, 0)
	w := &writeTurns{now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }}
	ctx := context.Background()
	if err := w.take(ctx, false); err != nil {
		t.Fatal(err)
	}
	var order []string
	var wg sync.WaitGroup
	take := func(name string, background bool, fg, bg int) {
		wg.Go(func() {
			if err := w.take(ctx, background); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			w.give()
		})
		waitQueued(t, w, fg, bg)
	}
	take("bg1", true, 0, 1)
	take("fg1", false, 1, 1)
	take("bg2", true, 1, 2)
	take("fg2", false, 2, 2)
	w.give()
	wg.Wait()
	if want := []string{"fg1", "fg2", "bg1", "bg2"}; !slices.Equal(order, want) {
		t.Errorf("turns %v, want %v", order, want)
	}

	// A background waiter that has waited maxBackgroundWait goes in arrival order.
	order = nil
	if err := w.take(ctx, false); err != nil {
		t.Fatal(err)
	}
	take("bg", true, 0, 1)
	mu.Lock()
	now = now.Add(maxBackgroundWait)
	mu.Unlock()
	take("fg", false, 1, 1)
	w.give()
	wg.Wait()
	if want := []string{"bg", "fg"}; !slices.Equal(order, want) {
		t.Errorf("turns %v, want %v", order, want)
	}
	if w.taken {
		t.Error("the writer is still taken after every turn ended")
	}
}

// A waiter whose context ends leaves the line; the turns go on.
func TestWriteTurns_Cancel(t *testing.T) {
	t.Parallel()
	w := &writeTurns{now: time.Now}
	if err := w.take(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.take(ctx, false) }()
	waitQueued(t, w, 1, 0)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("take: %v, want context.Canceled", err)
	}
	waitQueued(t, w, 0, 0)
	w.give()
	if err := w.take(context.Background(), true); err != nil {
		t.Fatalf("take after the cancelled waiter left: %v", err)
	}
	w.give()
}

// Behind a write transaction, a request's write gets the writer before a
// long document's batches that waited longer (database/sql alone hands
// the connection to a random waiter), and every transaction's end gives
// the writer on: the executor's, Begin's and BeginWrite's.
func TestDriver_WriteTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := OpenConfig(ctx, Config{Path: filepath.Join(t.TempDir(), "docket.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	held, err := d.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	bg := driver.WithBackgroundWrites(ctx)
	for i, name := range []string{"batch1", "batch2", "batch3"} {
		wg.Go(func() {
			tx, err := d.BeginWrite(bg)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			if err := tx.Commit(); err != nil {
				t.Error(err)
			}
		})
		waitQueued(t, &d.turns, 0, i+1)
	}
	wg.Go(func() {
		x, err := d.Executor().Begin(ctx)
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		order = append(order, "request")
		mu.Unlock()
		if err := x.Rollback(ctx); err != nil {
			t.Error(err)
		}
	})
	waitQueued(t, &d.turns, 1, 3)
	if err := held.Commit(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if len(order) != 4 || order[0] != "request" {
		t.Errorf("turns %v, want the request's first", order)
	}
	// The executor's own transactions end their turns too.
	if _, err := d.Executor().JobInsertMany(ctx, []*driver.JobInsertParams{
		{Queue: "q", Kind: "k", TenantID: "t", Args: json.RawMessage(`{}`), MaxAttempts: 1}}); err != nil {
		t.Fatal(err)
	}
	tx, err := d.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = tx.Rollback()
	if d.turns.taken {
		t.Error("the writer is still taken after every transaction ended")
	}
}
