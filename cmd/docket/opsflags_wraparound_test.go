package main

import (
	"testing"

	"github.com/docketq/docket/store/pgstore"
	"github.com/docketq/docket/store/sqlitestore"
)

// The poller reads the transaction-id ages from a PostgreSQL store only.
func TestWraparound_PostgresOnly(t *testing.T) {
	t.Parallel()
	if wraparound((*pgstore.Store)(nil)) == nil {
		t.Error("no transaction-id ages read from a PostgreSQL store")
	}
	if wraparound((*sqlitestore.Store)(nil)) != nil {
		t.Error("transaction-id ages read from a SQLite store")
	}
}
