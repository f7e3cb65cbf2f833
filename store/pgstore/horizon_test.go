package pgstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// TestDriver_HorizonHolders: a session idle in a transaction that took a
// transaction id is named first, with its state and ages; once it commits
// it is gone.
func TestDriver_HorizonHolders(t *testing.T) {
	t.Parallel()
	d := newStore(t)
	ctx := t.Context()
	if _, err := d.HorizonHolders(ctx, 0); !errors.Is(err, queue.ErrInvalid) {
		t.Errorf("HorizonHolders(0) = %v, want ErrInvalid", err)
	}
	conn, err := d.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var pid int
	var start time.Time
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid(), now() FROM (SELECT txid_current()) x`).Scan(&pid, &start); err != nil {
		t.Fatal(err)
	}
	const idle = 300 * time.Millisecond
	time.Sleep(idle) // the holder idles in its transaction

	hs, err := d.HorizonHolders(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) == 0 || hs[0].PID != pid {
		t.Fatalf("HorizonHolders = %+v, want pid %d first", hs, pid)
	}
	h := hs[0]
	if h.State != "idle in transaction" || h.User != "postgres" || !h.TransactionStart.Equal(start) {
		t.Errorf("holder = %+v, want idle in transaction, user postgres, started %s", h, start)
	}
	if h.TransactionAge < idle || h.StateAge < idle-100*time.Millisecond || h.StateAge > h.TransactionAge || h.XIDAge < 0 {
		t.Errorf("holder ages: transaction %s, state %s, xids %d; want both at least %s, state within transaction",
			h.TransactionAge, h.StateAge, h.XIDAge, idle)
	}

	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	hs, err = d.HorizonHolders(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		if h.PID == pid {
			t.Errorf("pid %d still named after its commit: %+v", pid, h)
		}
	}
}
