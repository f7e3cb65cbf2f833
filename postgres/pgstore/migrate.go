package pgstore

import (
	"context"

	"github.com/docketq/docket/postgres"
)

// Migrate brings the schema up to date: the engine's migrations first
// (postgres.Driver.Migrate), then the document store's own line.
func (s *Store) Migrate(ctx context.Context) error {
	return s.d.Migrate(ctx)
}

// MigrateURL connects to connString, migrates the engine and the document
// store, and disconnects: for tools and for test templates
// (testpg.Options{Template: pgstore.MigrateURL}).
func MigrateURL(connString string) error {
	ctx := context.Background()
	d, err := postgres.Open(ctx, connString)
	if err != nil {
		return err
	}
	defer d.Close()
	return New(d).Migrate(ctx)
}
