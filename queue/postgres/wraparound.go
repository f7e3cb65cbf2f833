package postgres

import (
	"context"
	"fmt"
)

// Wraparound is how far PostgreSQL's transaction ids have run ahead of
// what vacuum has frozen, and what keeps vacuum from freezing more
// (the chaos transaction-id test). Ages count transaction ids. PostgreSQL forces an
// anti-wraparound vacuum once a table's age passes autovacuum_freeze_max_age
// (200 million by default) and stops assigning ids near 2^31: what holds
// back the horizon (a replication slot, a forgotten prepared transaction)
// must be seen long before.
type Wraparound struct {
	// Database is the current database; DatabaseAge its
	// age(datfrozenxid).
	Database    string
	DatabaseAge int64
	// OldestDatabase is the database of the cluster with the oldest
	// datfrozenxid (template databases included); OldestDatabaseAge its
	// age. Wraparound is the cluster's: this is the age that counts.
	OldestDatabase    string
	OldestDatabaseAge int64
	// Slot is the replication slot whose xmin or catalog_xmin is oldest,
	// SlotAge the age of the older of the two; "" and 0 when no slot holds
	// one (a physical slot has an xmin only while a standby with
	// hot_standby_feedback reports one).
	Slot    string
	SlotAge int64
	// PreparedGID is the oldest prepared transaction's gid, PreparedAge
	// its age; "" and 0 when there is none. Docket prepares none.
	PreparedGID string
	PreparedAge int64
	// MaxPreparedTransactions is the server's max_prepared_transactions;
	// Docket needs 0 (no two-phase commit).
	MaxPreparedTransactions int
}

// wraparoundSQL reads Wraparound in one statement. Slots and prepared
// transactions are the cluster's, of every database.
const wraparoundSQL = `SELECT current_database(), age(cur.datfrozenxid), old.datname, age(old.datfrozenxid),
    coalesce(slot.slot_name, ''), coalesce(slot.xid_age, 0), coalesce(px.gid, ''), coalesce(age(px.transaction), 0),
    current_setting('max_prepared_transactions')::int
FROM pg_database cur
CROSS JOIN LATERAL (SELECT datname, datfrozenxid FROM pg_database
    ORDER BY age(datfrozenxid) DESC, datname LIMIT 1) old
LEFT JOIN LATERAL (SELECT slot_name, greatest(age(xmin), age(catalog_xmin)) AS xid_age FROM pg_replication_slots
    WHERE xmin IS NOT NULL OR catalog_xmin IS NOT NULL ORDER BY 2 DESC, slot_name LIMIT 1) slot ON true
LEFT JOIN LATERAL (SELECT gid, transaction FROM pg_prepared_xacts
    ORDER BY age(transaction) DESC, gid LIMIT 1) px ON true
WHERE cur.datname = current_database()`

// Wraparound reads the transaction-id ages of the database and the cluster
// and what holds them back (docs/monitoring.md).
func (d *Driver) Wraparound(ctx context.Context) (Wraparound, error) {
	var w Wraparound
	err := d.pool.QueryRow(ctx, wraparoundSQL).Scan(&w.Database, &w.DatabaseAge, &w.OldestDatabase, &w.OldestDatabaseAge,
		&w.Slot, &w.SlotAge, &w.PreparedGID, &w.PreparedAge, &w.MaxPreparedTransactions)
	if err != nil {
		return Wraparound{}, fmt.Errorf("wraparound: %w", interpretError(err))
	}
	return w, nil
}
