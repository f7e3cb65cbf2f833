package feed_test

import (
	"context"
	"testing"

	"github.com/docketq/docket/internal/testpg"
	"github.com/docketq/docket/postgres"
)

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
