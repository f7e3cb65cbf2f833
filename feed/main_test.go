package feed_test

import (
	"testing"

	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

func TestMain(m *testing.M) {
	pgtest.Main(m, pgtest.Options{Template: postgres.MigrateURL})
}
