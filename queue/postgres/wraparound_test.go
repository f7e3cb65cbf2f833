package postgres_test

import (
	"context"
	"testing"
)

// TestDriver_Wraparound: the transaction-id ages are positive, and a
// replication slot holding a catalog_xmin and a prepared transaction are
// named with their ages until they are gone. Not parallel: creating a
// logical slot waits for every transaction that holds an xid to end, and
// the slot and the prepared transaction hold back vacuum cluster-wide.
func TestDriver_Wraparound(t *testing.T) {
	d := newDriver(t)
	ctx := t.Context()
	w, err := d.Wraparound(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w.Database == "" || w.DatabaseAge <= 0 || w.OldestDatabase == "" || w.OldestDatabaseAge < w.DatabaseAge {
		t.Errorf("Wraparound = %+v, want positive ages, the oldest at least the current database's", w)
	}
	if w.Slot != "" || w.PreparedGID != "" {
		t.Errorf("Wraparound = %+v, want no slot and no prepared transaction", w)
	}
	var walLevel string
	if err := d.Pool().QueryRow(ctx, `SELECT current_setting('wal_level')`).Scan(&walLevel); err != nil {
		t.Fatal(err)
	}
	if w.MaxPreparedTransactions < 1 || walLevel != "logical" {
		t.Skipf("max_prepared_transactions %d, wal_level %s: the server (not pgtest's) has no room for a prepared transaction or a logical slot",
			w.MaxPreparedTransactions, walLevel)
	}
	exec := func(sql string) {
		t.Helper()
		// Not ctx: the cleanups run after it is cancelled.
		if _, err := d.Pool().Exec(context.Background(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	// A physical slot without a standby holds no xmin: not named.
	exec(`SELECT pg_create_physical_replication_slot('docket_wraparound_physical', true)`)
	t.Cleanup(func() { exec(`SELECT pg_drop_replication_slot('docket_wraparound_physical')`) })
	exec(`SELECT pg_create_logical_replication_slot('docket_wraparound', 'pgoutput')`)
	t.Cleanup(func() { exec(`SELECT pg_drop_replication_slot('docket_wraparound')`) })
	exec(`BEGIN; SELECT pg_current_xact_id(); PREPARE TRANSACTION 'docket_wraparound'`)
	t.Cleanup(func() { exec(`ROLLBACK PREPARED 'docket_wraparound'`) })
	// Two more ids, so that both are at least 2 old.
	exec(`SELECT pg_current_xact_id()`)
	exec(`SELECT pg_current_xact_id()`)
	if w, err = d.Wraparound(ctx); err != nil {
		t.Fatal(err)
	}
	if w.Slot != "docket_wraparound" || w.SlotAge < 2 || w.PreparedGID != "docket_wraparound" || w.PreparedAge < 2 {
		t.Errorf("Wraparound = %+v, want the logical slot and the prepared transaction, each at least 2 ids old", w)
	}
}
