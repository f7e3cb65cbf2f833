package feed_test

import (
	"testing"

	"github.com/docketq/docket/queue/pgtest"
	"github.com/docketq/docket/queue/postgres"
)

func TestMain(m *testing.M) {
	pgtest.Main(m, pgtest.Options{Template: postgres.MigrateURL})
}
