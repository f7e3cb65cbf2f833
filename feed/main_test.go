package feed_test

import (
	"testing"

	"github.com/docketq/docket/internal/testpg"
	"github.com/docketq/docket/postgres"
)

func TestMain(m *testing.M) {
	testpg.Main(m, testpg.Options{Template: postgres.MigrateURL})
}
