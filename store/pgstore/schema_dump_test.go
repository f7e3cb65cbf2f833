package pgstore_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// schemaDumpSQL lists the schema of the current schema from pg_catalog,
// one line per object: relations with their options, row-level security
// and grants; columns in order with type, default, nullability and
// storage; constraints, indexes, functions (with a hash of the body, their
// grants and settings), triggers, policies and views. Migrations' rows are
// data, not schema.
const schemaDumpSQL = `
SELECT 'rel ' || c.relname || ' ' || c.relkind::text || ' rls=' || c.relrowsecurity || '/' || c.relforcerowsecurity
    || ' opts=' || coalesce(c.reloptions::text, '') || ' acl=' || coalesce(c.relacl::text, '')
FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p', 'v', 'S')
UNION ALL
SELECT 'col ' || c.relname || ' ' || (row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum)) || ' ' || a.attname
    || ' ' || format_type(a.atttypid, a.atttypmod) || ' notnull=' || a.attnotnull
    || ' default=' || coalesce(pg_get_expr(d.adbin, d.adrelid), '') || ' storage=' || a.attstorage::text
FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p', 'v') AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT 'con ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid)
FROM pg_constraint WHERE connamespace = current_schema()::regnamespace
UNION ALL
SELECT 'idx ' || indexname || ' ' || indexdef FROM pg_indexes WHERE schemaname = current_schema()
UNION ALL
SELECT 'fn ' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ') ' || md5(p.prosrc)
    || ' secdef=' || p.prosecdef || ' config=' || coalesce(p.proconfig::text, '') || ' acl=' || coalesce(p.proacl::text, '')
    || ' returns=' || pg_get_function_result(p.oid)
FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace
UNION ALL
SELECT 'trg ' || pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal
UNION ALL
SELECT 'pol ' || tablename || ' ' || policyname || ' ' || roles::text || ' ' || cmd::text || ' using=' || coalesce(qual, '')
    || ' check=' || coalesce(with_check, '')
FROM pg_policies WHERE schemaname = current_schema()
UNION ALL
SELECT 'view ' || viewname || ' ' || md5(definition) FROM pg_views WHERE schemaname = current_schema()
UNION ALL
SELECT 'role docket_app member=' || pg_has_role(current_user, 'docket_app', 'MEMBER')
WHERE EXISTS (SELECT FROM pg_roles WHERE rolname = 'docket_app')
UNION ALL
SELECT 'schema usage docket_app=' || has_schema_privilege('docket_app', current_schema(), 'USAGE')
WHERE EXISTS (SELECT FROM pg_roles WHERE rolname = 'docket_app')`

// schemaDump returns the lines of schemaDumpSQL, sorted.
func schemaDump(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(t.Context(), schemaDumpSQL)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return lines
}

// diffLines lists the lines only in want (-) and only in got (+).
func diffLines(want, got []string) string {
	var b strings.Builder
	for _, l := range want {
		if !slices.Contains(got, l) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}
