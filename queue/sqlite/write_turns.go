package sqlite

import (
	"context"
	"database/sql"
	"slices"
	"sync"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// maxBackgroundWait is how long a background write transaction lets the
// others go first: after it, it takes its turn in arrival order, so that a
// steady stream of other writes cannot hold it back forever.
const maxBackgroundWait = 200 * time.Millisecond

// writeTurns gives the writer's one connection to one write transaction
// at a time, in the order they asked for it, except that a background one
// (driver.BackgroundWrites) waits while any other does, for at most
// maxBackgroundWait. database/sql alone hands a freed connection to a
// random waiter: behind a long document's batches, an upload's write
// waited for two of them and more.
type writeTurns struct {
	mu    sync.Mutex
	taken bool
	fg    []*turnWaiter // in arrival order
	bg    []*turnWaiter
	now   func() time.Time
}

type turnWaiter struct {
	ready chan struct{} // closed when the turn is the waiter's
	since time.Time
}

// take waits for a turn: nil once it is the caller's (end it with give),
// or ctx's error.
func (w *writeTurns) take(ctx context.Context, background bool) error {
	w.mu.Lock()
	if !w.taken {
		w.taken = true
		w.mu.Unlock()
		return nil
	}
	me := &turnWaiter{ready: make(chan struct{}), since: w.now()}
	queue := &w.fg
	if background {
		queue = &w.bg
	}
	*queue = append(*queue, me)
	w.mu.Unlock()
	select {
	case <-me.ready:
		return nil
	case <-ctx.Done():
	}
	w.mu.Lock()
	if i := slices.Index(*queue, me); i >= 0 {
		*queue = slices.Delete(*queue, i, i+1)
		w.mu.Unlock()
		return ctx.Err()
	}
	w.mu.Unlock()
	w.give() // the turn came as ctx ended: pass it on
	return ctx.Err()
}

// give ends the current turn and starts the next waiter's: the oldest
// background waiter's when it has waited maxBackgroundWait, else the
// oldest other's, else the oldest background one's.
func (w *writeTurns) give() {
	w.mu.Lock()
	defer w.mu.Unlock()
	var next *turnWaiter
	switch {
	case len(w.bg) > 0 && (len(w.fg) == 0 || w.now().Sub(w.bg[0].since) >= maxBackgroundWait):
		next, w.bg = w.bg[0], w.bg[1:]
	case len(w.fg) > 0:
		next, w.fg = w.fg[0], w.fg[1:]
	default:
		w.taken = false
		return
	}
	close(next.ready)
}

// beginWrite begins a write transaction (BEGIN IMMEDIATE) on the writer
// in its turn; the transaction's Commit or Rollback ends the turn.
func (d *Driver) beginWrite(ctx context.Context) (*WriteTx, error) {
	if err := d.turns.take(ctx, driver.BackgroundWrites(ctx)); err != nil {
		return nil, err
	}
	tx, err := d.writer.BeginTx(ctx, nil)
	if err != nil {
		d.turns.give()
		return nil, err
	}
	return &WriteTx{Tx: tx, turns: &d.turns}, nil
}

// BeginWrite begins a write transaction on the writer, for code that
// shares the engine's database (a document store): it waits for its turn
// among the store's other write transactions (in arrival order, a
// context marked by driver.WithBackgroundWrites after the others), and
// its Commit or Rollback ends the turn. Its Tx serves Client.EnqueueTx
// and Task.CompleteTx.
func (d *Driver) BeginWrite(ctx context.Context) (*WriteTx, error) {
	tx, err := d.beginWrite(ctx)
	if err != nil {
		return nil, interpretError(err)
	}
	return tx, nil
}

// WriteTx is a write transaction begun in its turn (Driver.BeginWrite).
// Commit or Rollback it through WriteTx, never through Tx, which would
// leave the turn taken.
type WriteTx struct {
	Tx    *sql.Tx
	turns *writeTurns
	once  sync.Once
}

// Commit commits the transaction and ends its turn.
func (t *WriteTx) Commit() error {
	err := t.Tx.Commit()
	t.end()
	return err
}

// Rollback rolls the transaction back, unless it has ended, and ends its
// turn. It can be deferred.
func (t *WriteTx) Rollback() error {
	err := t.Tx.Rollback()
	t.end()
	return err
}

func (t *WriteTx) end() { t.once.Do(t.turns.give) }
