package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// Tenant isolation on PostgreSQL: row-level security keeps every tenant's
// rows from another tenant's transactions, whatever the query forgets.

// tenantTables are the tables with a tenant_id column the migrations
// create; the catalog test also finds any other.
var tenantTables = []string{
	"docket_api_keys", "docket_chunks", "docket_documents", "docket_idempotency",
	"docket_jobs", "docket_rate_slots", "docket_tenant_limits", "docket_tenant_queues",
}

// TestRLS_Catalog: every table with a tenant_id column has forced
// row-level security and a docket_app policy for every command; docket_app
// owns nothing, is no superuser and does not bypass RLS; views are
// security_invoker; every policy column leads an index.
func TestRLS_Catalog(t *testing.T) {
	t.Parallel()
	d := newStore(t)
	ctx := t.Context()
	rows, err := d.Pool().Query(ctx, `
SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,
       (SELECT array_agg(DISTINCT cmd ORDER BY cmd) FROM pg_policy p,
            unnest(CASE p.polcmd WHEN '*' THEN ARRAY['r', 'a', 'w', 'd'] ELSE ARRAY[p.polcmd::text] END) cmd
        WHERE p.polrelid = c.oid AND 'docket_app'::regrole = ANY (p.polroles))
FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
ORDER BY c.relname`)
	if err != nil {
		t.Fatal(err)
	}
	type table struct {
		name        string
		rls, force  bool
		appCommands []string
	}
	tables, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (table, error) {
		var tb table
		err := r.Scan(&tb.name, &tb.rls, &tb.force, &tb.appCommands)
		return tb, err
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tb := range tables {
		names = append(names, tb.name)
		if !tb.rls || !tb.force {
			t.Errorf("%s: relrowsecurity %v, relforcerowsecurity %v; want both", tb.name, tb.rls, tb.force)
		}
		if got := strings.Join(tb.appCommands, ""); got != "adrw" {
			t.Errorf("%s: docket_app policies cover commands %q, want all of a, d, r, w", tb.name, got)
		}
	}
	for _, want := range tenantTables {
		if !contains(names, want) {
			t.Errorf("table %s with a tenant_id column not found; found %v", want, names)
		}
	}
	checkAppRole(t, d)
	checkViews(t, d)
	checkPolicyIndexes(t, d)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkAppRole: docket_app cannot log in, is no superuser, does not bypass
// RLS and owns no object of the database.
func checkAppRole(t *testing.T, d *testStore) {
	t.Helper()
	var super, bypass, login bool
	var owns int
	err := d.Pool().QueryRow(t.Context(), `
SELECT rolsuper, rolbypassrls, rolcanlogin,
       (SELECT count(*) FROM pg_class WHERE relowner = r.oid) + (SELECT count(*) FROM pg_proc WHERE proowner = r.oid) +
       (SELECT count(*) FROM pg_namespace WHERE nspowner = r.oid) + (SELECT count(*) FROM pg_type WHERE typowner = r.oid)
FROM pg_roles r WHERE rolname = 'docket_app'`).Scan(&super, &bypass, &login, &owns)
	if err != nil {
		t.Fatalf("docket_app: %v", err)
	}
	if super || bypass || login || owns != 0 {
		t.Errorf("docket_app: superuser %v, bypassrls %v, login %v, owns %d objects; want none", super, bypass, login, owns)
	}
}

// checkViews: a view runs with its caller's rights, so RLS applies through
// it (a security-definer view would read as its owner).
func checkViews(t *testing.T, d *testStore) {
	t.Helper()
	rows, err := d.Pool().Query(t.Context(), `
SELECT relname FROM pg_class
WHERE relnamespace = current_schema()::regnamespace AND relkind = 'v'
  AND NOT EXISTS (SELECT FROM unnest(reloptions) o
                  WHERE lower(o) IN ('security_invoker=true', 'security_invoker=on', 'security_invoker=1'))`)
	if err != nil {
		t.Fatal(err)
	}
	views, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(views) > 0 {
		t.Errorf("views without security_invoker = true: %v", views)
	}
}

// checkPolicyIndexes: every column a policy reads (its dependencies)
// leads an index of its table, so the policy's filter is an index scan.
func checkPolicyIndexes(t *testing.T, d *testStore) {
	t.Helper()
	rows, err := d.Pool().Query(t.Context(), `
SELECT p.polrelid::regclass::text, p.polname, a.attname
FROM pg_policy p
JOIN pg_depend dep ON dep.classid = 'pg_policy'::regclass AND dep.objid = p.oid
    AND dep.refclassid = 'pg_class'::regclass AND dep.refobjid = p.polrelid AND dep.refobjsubid > 0
JOIN pg_attribute a ON a.attrelid = p.polrelid AND a.attnum = dep.refobjsubid
WHERE NOT EXISTS (SELECT FROM pg_index i WHERE i.indrelid = p.polrelid AND i.indkey[0] = dep.refobjsubid)`)
	if err != nil {
		t.Fatal(err)
	}
	missing, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var table, policy, column string
		err := r.Scan(&table, &policy, &column)
		return fmt.Sprintf("%s.%s (policy %s)", table, column, policy), err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("policy columns that lead no index: %v", missing)
	}
	var policies int
	if err := d.Pool().QueryRow(t.Context(), `SELECT count(*) FROM pg_policy`).Scan(&policies); err != nil || policies == 0 {
		t.Fatalf("%d policies (%v)", policies, err)
	}
}

// matrixTable is a tenant table of the allow/deny matrix: an insert of a
// new row (for tenant $1; {u} is replaced by a unique literal) and what
// docket_app may do to it (s select, i insert, u update, d delete).
type matrixTable struct {
	name, insert, grants string
}

var matrixTables = []matrixTable{
	{"docket_documents", `INSERT INTO docket_documents (id, tenant_id) VALUES ({u}, $1)`, "siud"},
	{"docket_chunks", `INSERT INTO docket_chunks (tenant_id, document_id, idx, text)
        VALUES ($1, 'doc-' || $1, hashtext({u}) & 1073741823, 'text')`, "sid"},
	{"docket_rate_slots", `INSERT INTO docket_rate_slots (tenant_id) SELECT $1 WHERE {u} <> ''`, "sid"},
	{"docket_idempotency", `INSERT INTO docket_idempotency (tenant_id, key, request_hash, status_code, body)
        VALUES ($1, {u}, 'h', 202, '')`, "si"},
	{"docket_jobs", `INSERT INTO docket_jobs (queue, kind, tenant_id, state) VALUES ('q', {u}, $1, 'pending')`, "siu"},
	{"docket_tenant_queues", `INSERT INTO docket_tenant_queues (queue, tenant_id) VALUES ({u}, $1)`, "siu"},
	{"docket_tenant_limits", `INSERT INTO docket_tenant_limits (tenant_id, queue, max_running) VALUES ($1, {u}, 2)`, "s"},
	{"docket_api_keys", `INSERT INTO docket_api_keys (id, tenant_id, hash) VALUES ({u}, $1, '\x00')`, ""},
}

// matrix runs statements as docket_app in transactions it rolls back.
type matrix struct {
	t    *testing.T
	pool *pgxpool.Pool
	seq  int
}

// insertSQL returns tb's insert with a fresh unique value.
func (m *matrix) insertSQL(tb matrixTable) string {
	m.seq++
	return strings.ReplaceAll(tb.insert, "{u}", fmt.Sprintf("'u%d'", m.seq)) + " RETURNING tenant_id"
}

// run runs sql as docket_app with app.tenant_id = tenant (none when
// empty) and returns the tenant_id of each row it returned.
func (m *matrix) run(tenant, sql string, args ...any) ([]string, error) {
	ctx := m.t.Context()
	tx, err := m.pool.Begin(ctx)
	if err != nil {
		m.t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT set_config('role', 'docket_app', true)`); err != nil {
		m.t.Fatal(err)
	}
	if tenant != "" {
		if _, err := tx.Exec(ctx, `SELECT set_config('app.tenant_id', $1, true)`, tenant); err != nil {
			m.t.Fatal(err)
		}
	}
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// want checks the rows sql returned: n of them, all of tenant want.
func (m *matrix) want(what string, got []string, err error, n int, tenant string) {
	m.t.Helper()
	if err != nil {
		m.t.Errorf("%s: %v", what, err)
		return
	}
	if (n < 0 && len(got) == 0) || (n >= 0 && len(got) != n) {
		m.t.Errorf("%s: %d rows, want %d (-1: some)", what, len(got), n)
	}
	for _, g := range got {
		if g != tenant {
			m.t.Errorf("%s: a row of tenant %q, want only %q", what, g, tenant)
		}
	}
}

// wantDenied checks that err is PostgreSQL's insufficient_privilege.
func (m *matrix) wantDenied(what string, err error) {
	m.t.Helper()
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
		m.t.Errorf("%s: error %v, want 42501 insufficient_privilege", what, err)
	}
}

// TestRLS_Matrix: as docket_app with app.tenant_id = a, a's rows can
// be read, inserted, updated and deleted (as far as the grants allow,
// RETURNING proving it); b's rows are invisible to every statement and a
// row of b cannot be written; with no tenant set nothing is visible.
func TestRLS_Matrix(t *testing.T) {
	t.Parallel()
	d, ctx := docsSetup(t) // tenants a and b
	m := &matrix{t: t, pool: d.Pool()}
	for _, tenant := range []string{"a", "b"} {
		if _, err := d.Pool().Exec(ctx, `INSERT INTO docket_documents (id, tenant_id) VALUES ('doc-' || $1, $1)`, tenant); err != nil {
			t.Fatal(err)
		}
		for _, tb := range matrixTables {
			if _, err := d.Pool().Exec(ctx, m.insertSQL(tb), tenant); err != nil {
				t.Fatalf("seed %s as the owner: %v", tb.name, err)
			}
		}
	}
	for _, tb := range matrixTables {
		t.Run(tb.name, func(t *testing.T) {
			m := &matrix{t: t, pool: d.Pool(), seq: 1000}
			has := func(op byte) bool { return strings.IndexByte(tb.grants, op) >= 0 }
			sel, selB := `SELECT tenant_id FROM `+tb.name, `SELECT tenant_id FROM `+tb.name+` WHERE tenant_id = 'b'`
			upd := `UPDATE ` + tb.name + ` SET tenant_id = tenant_id WHERE tenant_id = $1 RETURNING tenant_id`
			del := `DELETE FROM ` + tb.name + ` WHERE tenant_id = $1 RETURNING tenant_id`
			steal := `UPDATE ` + tb.name + ` SET tenant_id = 'b' WHERE tenant_id = 'a' RETURNING tenant_id`
			check := func(op byte, what string, n int, tenant, sql string, args ...any) {
				got, err := m.run(tenant, sql, args...)
				if has(op) {
					m.want(what, got, err, n, tenant)
				} else {
					m.wantDenied(what+" (not granted)", err)
				}
			}
			check('s', "select as a", -1, "a", sel)
			check('s', "select b's rows as a", 0, "a", selB)
			check('s', "select with no tenant", 0, "", sel)
			check('i', "insert a row of a", 1, "a", m.insertSQL(tb), "a")
			check('u', "update a's rows", -1, "a", upd, "a")
			check('u', "update b's rows as a", 0, "a", upd, "b")
			check('u', "update with no tenant", 0, "", upd, "a")
			check('d', "delete a's rows", -1, "a", del, "a")
			check('d', "delete b's rows as a", 0, "a", del, "b")
			check('d', "delete with no tenant", 0, "", del, "a")
			_, err := m.run("a", m.insertSQL(tb), "b")
			m.wantDenied("insert a row of b as a", err)
			_, err = m.run("", m.insertSQL(tb), "a")
			m.wantDenied("insert with no tenant", err)
			if has('u') {
				_, err = m.run("a", steal)
				m.wantDenied("move a's row to b", err)
			}
		})
	}
}

// TestRLS_NoLeakThroughPool: 1,000 tenant transactions alternating
// tenants, concurrently over a pool of two connections, some rolled back
// and some aborted by an error. Inside each the role is docket_app and the
// tenant its own; after each, and at the end on both connections, the
// connection is the owner's with no tenant set.
func TestRLS_NoLeakThroughPool(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cfg, err := pgxpool.ParseConfig(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	d := storeOn(pool)
	var owner string
	if err := pool.QueryRow(ctx, `SELECT current_user`).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	const workers, each = 4, 250
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if err := leakRound(ctx, d, owner, w*each+i); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	conns := make([]*pgxpool.Conn, 2)
	for i := range conns {
		if conns[i], err = pool.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		defer conns[i].Release()
		if err := checkConnClean(ctx, conns[i], owner); err != nil {
			t.Errorf("pooled connection %d: %v", i, err)
		}
	}
}

var errRollback = errors.New("roll back")

// leakRound runs transaction n: tenant a or b, committed, rolled back
// (every 7th) or aborted by a failed statement (every 11th).
func leakRound(ctx context.Context, d *testStore, owner string, n int) error {
	tenant := []string{"a", "b"}[n%2]
	err := d.InTenant(ctx, tenant, func(tx docket.Tx) error {
		ptx := tx.Native().(pgx.Tx)
		var user, set string
		if err := ptx.QueryRow(ctx, `SELECT current_user, current_setting('app.tenant_id', true)`).Scan(&user, &set); err != nil {
			return err
		}
		if user != "docket_app" || set != tenant {
			return fmt.Errorf("round %d inside: user %q tenant %q, want docket_app %q", n, user, set, tenant)
		}
		if err := tx.DocumentInsert(ctx, &docket.Document{ID: fmt.Sprintf("d%d", n)}); err != nil {
			return err
		}
		docs, err := tx.DocumentList(ctx, &docket.DocumentListParams{Limit: 3})
		if err != nil {
			return err
		}
		for _, doc := range docs {
			if doc.TenantID != tenant {
				return fmt.Errorf("round %d: tenant %s listed a document of %s", n, tenant, doc.TenantID)
			}
		}
		switch {
		case n%11 == 0:
			_, err := ptx.Exec(ctx, `SELECT 1/0`)
			return err
		case n%7 == 0:
			return errRollback
		}
		return nil
	})
	if err != nil && !errors.Is(err, errRollback) && (n%11 != 0 || !strings.Contains(err.Error(), "division by zero")) {
		return fmt.Errorf("round %d: %w", n, err)
	}
	c, err := d.Pool().Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	if err := checkConnClean(ctx, c, owner); err != nil {
		return fmt.Errorf("after round %d: %w", n, err)
	}
	return nil
}

// checkConnClean: the connection runs as owner with no tenant set.
func checkConnClean(ctx context.Context, c *pgxpool.Conn, owner string) error {
	var user, tenant string
	err := c.QueryRow(ctx, `SELECT current_user, coalesce(current_setting('app.tenant_id', true), '')`).Scan(&user, &tenant)
	if err != nil {
		return err
	}
	if user != owner || tenant != "" {
		return fmt.Errorf("user %q tenant %q, want %q and none", user, tenant, owner)
	}
	return nil
}
