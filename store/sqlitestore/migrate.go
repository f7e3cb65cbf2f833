package sqlitestore

import (
	"context"
	"embed"

	"github.com/docketq/docket/queue/sqlite"
)

//go:embed migrations/*.sql repeatable/*.sql
var migrationFS embed.FS

// docsLine is the document store's migration line. Legacy maps it onto the
// single sequence of before the lines (docs/migrations.md); 0 is a
// migration made after it (005 on).
var docsLine = sqlite.MigrationLine{
	Name: "docs", FS: migrationFS, Dir: "migrations", RepeatableDir: "repeatable",
	Legacy: []int{2, 3, 8, 10, 0, 0, 0},
}

// Migrate brings the schema up to date: the engine's migrations first
// (sqlite.Driver.Migrate), then the document store's own line.
func (s *Store) Migrate(ctx context.Context) error {
	if err := s.d.Migrate(ctx); err != nil {
		return err
	}
	return s.d.MigrateLine(ctx, docsLine)
}
