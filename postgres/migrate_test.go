package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/docketq/docket/internal/testpg"
	"github.com/docketq/docket/postgres"
)

// TestDriver_MigrateConcurrent: eight drivers (eight pools, as eight
// processes) migrate an empty database at once; all succeed, every
// migration is applied once, and a later Migrate changes nothing.
func TestDriver_MigrateConcurrent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	connString := testpg.NewEmptyDatabase(t)
	drivers := make([]*postgres.Driver, 8)
	for i := range drivers {
		d, err := postgres.Open(ctx, connString)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		drivers[i] = d
	}
	var wg sync.WaitGroup
	errs := make([]error, len(drivers))
	for i, d := range drivers {
		wg.Go(func() { errs[i] = d.Migrate(ctx) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Migrate #%d: %v", i, err)
		}
	}
	pool := drivers[0].Pool()
	var versions, applied int
	err := pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT version) FROM docket_migrations`).Scan(&applied, &versions)
	if err != nil || applied != versions || applied < 2 {
		t.Fatalf("docket_migrations: %d rows, %d versions, %v", applied, versions, err)
	}
	if err := drivers[1].Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate again: %v", err)
	}
	var after int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM docket_migrations`).Scan(&after); err != nil || after != applied {
		t.Fatalf("a second Migrate changed docket_migrations: %d rows, was %d (%v)", after, applied, err)
	}
	// The schema works.
	f := &fixture{t: t, ctx: ctx, d: drivers[2], x: drivers[2].Executor()}
	f.enqueue(1, "acme")
	if got := f.claim(f.x, 1); len(got) != 1 {
		t.Fatalf("claimed %d, want 1", len(got))
	}
}
