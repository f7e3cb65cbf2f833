package docket

// Wraparound is how far PostgreSQL's transaction ids have run ahead of
// what vacuum has frozen, and what holds vacuum back from freezing more
// (postgres.Driver.Wraparound). Ages count
// transaction ids: PostgreSQL forces an anti-wraparound vacuum past
// autovacuum_freeze_max_age (200 million by default) and stops assigning
// ids near 2^31. SQLite has no transaction ids.
//
// Its fields are postgres.Wraparound's, in the same order, so that the
// document store converts one to the other.
type Wraparound struct {
	// Database is the current database; DatabaseAge its
	// age(datfrozenxid).
	Database    string
	DatabaseAge int64
	// OldestDatabase is the cluster's database with the oldest
	// datfrozenxid, OldestDatabaseAge its age: the one that counts.
	OldestDatabase    string
	OldestDatabaseAge int64
	// Slot is the replication slot whose xmin or catalog_xmin is oldest,
	// SlotAge the age of the older of the two; "" and 0 when no slot
	// holds one.
	Slot    string
	SlotAge int64
	// PreparedGID is the oldest prepared transaction's gid, PreparedAge
	// its age; "" and 0 when there is none.
	PreparedGID string
	PreparedAge int64
	// MaxPreparedTransactions is the server's max_prepared_transactions;
	// Docket needs 0 (no two-phase commit).
	MaxPreparedTransactions int
}
