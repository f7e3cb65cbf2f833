package pipeline_test

import (
	"context"
	"testing"

	"github.com/docketq/docket/internal/testpg"
	"github.com/docketq/docket/postgres"
)

// TestMain starts one throwaway PostgreSQL cluster for the package; every
// PostgreSQL test gets its own database, copied from a migrated template.
func TestMain(m *testing.M) {
	testpg.Main(m, testpg.Options{Template: migrate})
}

// migrate runs the PostgreSQL migrations once, into the template database.
func migrate(connString string) error {
	ctx := context.Background()
	d, err := postgres.Open(ctx, connString)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Migrate(ctx)
}
