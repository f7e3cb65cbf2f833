package pgstore

import (
	"context"
	"embed"

	"github.com/docketq/docket/queue/postgres"
)

//go:embed migrations/*.sql repeatable/*.sql
var migrationFS embed.FS

// docsLine is the document store's migration line. Legacy maps it onto the
// single sequence of before the lines (docs/migrations.md); 0 is a
// migration made after it (008 on).
var docsLine = postgres.MigrationLine{
	Name: "docs", FS: migrationFS, Dir: "migrations", RepeatableDir: "repeatable",
	Legacy: []int{3, 4, 5, 7, 11, 13, 14, 0, 0, 0},
}

// Migrate brings the schema up to date: the engine's migrations first
// (postgres.Driver.Migrate), then the document store's own line.
func (s *Store) Migrate(ctx context.Context) error {
	if err := s.d.Migrate(ctx); err != nil {
		return err
	}
	return s.d.MigrateLine(ctx, docsLine)
}

// MigrateURL connects to connString, migrates the engine and the document
// store, and disconnects: for tools and for test templates
// (pgtest.Options{Template: pgstore.MigrateURL}).
func MigrateURL(connString string) error {
	ctx := context.Background()
	d, err := postgres.Open(ctx, connString)
	if err != nil {
		return err
	}
	defer d.Close()
	return New(d).Migrate(ctx)
}
