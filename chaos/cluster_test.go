package chaos

import (
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue/postgres/pgtest"
)

// startCluster starts a PostgreSQL cluster of the test's own, for the
// scenarios that restart, crash or partition the server (the shared
// cluster serves the other tests). Its template holds the migrated schema
// and the ledger; it is stopped when the test ends, after its server log
// is logged if the test failed.
func startCluster(t *testing.T, opts pgtest.Options) *pgtest.Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("chaos tests start real worker processes; skipped with -short")
	}
	if cluster.External() {
		t.Skip("this scenario restarts, crashes or partitions its own server; not with " + pgtest.EnvDatabaseURL)
	}
	opts.Template = migrate
	if opts.MaxConnections == 0 {
		opts.MaxConnections = 200
	}
	c, err := pgtest.Start(opts)
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log of the test's cluster, last lines:\n%s", c.LogTail())
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stop cluster: %v", err)
		}
	})
	return c
}

// databaseName returns the database of a connection string.
func databaseName(t *testing.T, connString string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		t.Fatalf("parse %q: %v", connString, err)
	}
	return cfg.Database
}
