package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// TestDriver_MigrateConcurrent: eight drivers (eight pools, as eight
// processes) migrate an empty database at once; all succeed, every
// migration is applied once, and a later Migrate changes nothing.
func TestDriver_MigrateConcurrent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	connString := pgtest.NewEmptyDatabase(t)
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

// TestDriver_MigrateEngineOnly: the engine's line alone creates no
// document table, no row-level-security policy and no grant to the
// document service's role.
func TestDriver_MigrateEngineOnly(t *testing.T) {
	t.Parallel()
	d := newDriver(t) // migrated by postgres.MigrateURL: the engine only
	var tables, policies, rls, grants int
	err := d.Pool().QueryRow(t.Context(), `SELECT
    (SELECT count(*) FROM pg_class WHERE relnamespace = current_schema()::regnamespace
        AND relname IN ('docket_tenants', 'docket_api_keys', 'docket_documents', 'docket_chunks',
            'docket_rate_slots', 'docket_idempotency', 'docket_search_configs', 'docket_tenant_deletions')),
    (SELECT count(*) FROM pg_policy),
    (SELECT count(*) FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relrowsecurity),
    (SELECT count(*) FROM pg_class WHERE relnamespace = current_schema()::regnamespace
        AND relacl::text LIKE '%docket_app%')`).Scan(&tables, &policies, &rls, &grants)
	if err != nil {
		t.Fatal(err)
	}
	if tables+policies+rls+grants != 0 {
		t.Errorf("engine-only schema: %d document tables, %d policies, %d tables under RLS, %d granted to docket_app; want none",
			tables, policies, rls, grants)
	}
	var lines []string
	rows, err := d.Pool().Query(t.Context(), `SELECT DISTINCT line FROM docket_migrations ORDER BY line`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	if rows.Err() != nil || len(lines) != 1 || lines[0] != "engine" {
		t.Errorf("docket_migrations lines %v (%v), want [engine]", lines, rows.Err())
	}
}

// TestDriver_MigratePrebuiltIndex: migrations 014 and 017, each on a
// database at the version before it whose operator built the new
// docket_jobs_tenant beforehand under the name the migration looks for
// (CREATE INDEX CONCURRENTLY, docs/migrations.md), only swap the names,
// and leave the index the migration makes.
func TestDriver_MigratePrebuiltIndex(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		version       int
		before, after string // docket_jobs_tenant's predicate
		prebuilt      string
	}{
		{14, "", "WHERE state <> 'running'", "docket_jobs_tenant_idle"},
		{17, "WHERE state <> 'running'", "WHERE state NOT IN ('pending', 'running')", "docket_jobs_tenant_settled"},
	} {
		t.Run(fmt.Sprint(c.version), func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			indexDef := `SELECT pg_get_indexdef('docket_jobs_tenant'::regclass)`
			f.exec(`CREATE INDEX docket_jobs_expected ON docket_jobs (tenant_id, id) ` + c.after)
			want := strings.ReplaceAll(f.queryString(`SELECT pg_get_indexdef('docket_jobs_expected'::regclass)`), "docket_jobs_expected", "docket_jobs_tenant")
			f.exec(`DROP INDEX docket_jobs_expected`)
			// Back to the index of the version before, as such a database has it.
			f.exec(`DROP INDEX docket_jobs_tenant`)
			f.exec(`CREATE INDEX docket_jobs_tenant ON docket_jobs (tenant_id, id) ` + c.before)
			f.exec(`DELETE FROM docket_migrations WHERE line = 'engine' AND version = $1`, c.version)
			f.enqueue(3, "a", "b")
			f.exec(`CREATE INDEX CONCURRENTLY ` + c.prebuilt + ` ON docket_jobs (tenant_id, id) ` + c.after)
			if err := f.d.Migrate(f.ctx); err != nil {
				t.Fatalf("Migrate with the index built beforehand: %v", err)
			}
			if got := f.queryString(indexDef); got != want {
				t.Errorf("docket_jobs_tenant is %q, want %q", got, want)
			}
			if n := f.queryInt(`SELECT count(*) FROM pg_class WHERE relname = $1`, c.prebuilt); n != 0 {
				t.Errorf("%s left behind", c.prebuilt)
			}
			if n := f.queryInt(`SELECT count(*) FROM docket_migrations WHERE line = 'engine' AND version = $1`, c.version); n != 1 {
				t.Errorf("migration %d recorded %d times, want 1", c.version, n)
			}
		})
	}
	// A fresh install has 017's index.
	f := setup(t)
	got := f.queryString(`SELECT pg_get_indexdef('docket_jobs_tenant'::regclass)`)
	if !strings.Contains(got, "'pending'::text, 'running'::text") {
		t.Errorf("a fresh install's docket_jobs_tenant is %q, want 017's", got)
	}
}

// Each function, trigger and view of the engine is defined once, in its
// repeatable file; no migration creates one.
func TestMigrations_CodeInRepeatableFiles(t *testing.T) {
	t.Parallel()
	if err := postgres.EngineLine().CheckDefinitions(); err != nil {
		t.Fatal(err)
	}
}
