package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The chunks of TestChunkPlans: tenant "t", documents "d0".."d<docs-1>" of
// perDoc chunks each; chunk n of them all (document by document) has rowid
// n+1, index n%perDoc and text "chunk <n> word<n%1000>".
const (
	fillTenantSQL    = `INSERT INTO docket_tenants (id, name, plan, created_at, updated_at) VALUES ('t', 't', 'free', 0, 0)`
	fillDocumentsSQL = `WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n + 1 < ?1)
INSERT INTO docket_documents (id, tenant_id, filename, content_type, size, sha256, blob_key, created_at, updated_at)
SELECT 'd' || n, 't', 'f' || n || '.txt', 'text/plain', 0, '', '', n, n FROM g`
	// fillChunksSQL counts the chunks as a join of two small tables, one
	// row a document and one an index: counting all 10^6 in one recursive
	// CTE took a third of the insert's time under -race.
	fillChunksSQL = `WITH RECURSIVE doc(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM doc WHERE n + 1 < ?1),
i(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM i WHERE n + 1 < ?2),
g(doc, idx, n) AS (SELECT doc.n, i.n, doc.n * ?2 + i.n FROM doc CROSS JOIN i)
INSERT INTO docket_chunks (document_id, idx, tenant_id, text, model, dimensions)
SELECT 'd' || doc, idx, 't', 'chunk ' || n || ' word' || (n % 1000), 'm', 0 FROM g`
	// fillIndexSQL indexes the chunks as the insert trigger does, their
	// words behind tenant "t"'s prefix ?1 (tenantTerms): each word of
	// their text follows a single space, and they have no compounds.
	fillIndexSQL = `INSERT INTO docket_chunks_fts (rowid, text, compounds)
SELECT id, ?1 || replace(text, ' ', ' ' || ?1), '' FROM docket_chunks ORDER BY id`
	// fillChunksPlainSQL is the same chunks as the store inserts them, one
	// after another with the triggers firing: TestFillChunks's reference.
	fillChunksPlainSQL = `WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n + 1 < ?1 * ?2)
INSERT INTO docket_chunks (document_id, idx, tenant_id, text, model, dimensions)
SELECT 'd' || (n / ?2), n % ?2, 't', 'chunk ' || n || ' word' || (n % 1000), 'm', 0 FROM g`
)

// fillChunks gives s the chunks above, in bulk, faster than
// inserting them as the store does (scripts/test.sh builds SQLite without
// the race detector's instrumentation, which made either take minutes).
// The fill runs on a connection of its own (openFill), in one transaction, with the triggers
// on docket_chunks dropped and then created again from their own SQL.
// One INSERT ... SELECT (fillIndexSQL) then indexes the rows as the insert
// trigger would have, one by one, with the index's
// limit on unflushed index data ('hashsize', 1 MB by default) raised for
// it so that it writes one segment and merges none, and then
// deleted. TestFillChunks checks that the database is the one the plain
// inserts leave.
func fillChunks(t testing.TB, s *Store, docs, perDoc int) {
	t.Helper()
	ctx := context.Background()
	tx, err := openFill(t, s).BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	triggers, err := chunkTriggers(ctx, tx)
	if err != nil {
		t.Fatalf("fill: %v", err)
	}
	var stmts []fillStmt
	for _, tr := range triggers {
		stmts = append(stmts, fillStmt{sql: "DROP TRIGGER " + tr.name})
	}
	stmts = append(stmts, fillStmt{sql: fillTenantSQL}, fillStmt{fillDocumentsSQL, []any{docs}},
		fillStmt{fillChunksSQL, []any{docs, perDoc}})
	for _, tr := range triggers {
		stmts = append(stmts, fillStmt{sql: tr.sql})
	}
	stmts = append(stmts,
		fillStmt{sql: `INSERT INTO docket_chunks_fts (docket_chunks_fts, rank) VALUES ('hashsize', 1073741824)`},
		fillStmt{fillIndexSQL, []any{tenantPrefix("t")}},
		fillStmt{sql: `DELETE FROM docket_chunks_fts_config WHERE k = 'hashsize'`})
	fillExec(t, tx, stmts)
	if err := tx.Commit(); err != nil {
		t.Fatalf("fill: %v", err)
	}
}

// fillChunksPlain gives s the same chunks as fillChunks, inserted on the
// store's writer with foreign keys checked and the triggers firing.
func fillChunksPlain(t *testing.T, s *Store, docs, perDoc int) {
	t.Helper()
	fillExec(t, s.d.DB(), []fillStmt{{sql: fillTenantSQL}, {fillDocumentsSQL, []any{docs}},
		{fillChunksPlainSQL, []any{docs, perDoc}}})
}

type fillStmt struct {
	sql  string
	args []any
}

// execer is a *sql.DB or a *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// fillExec runs stmts on db in order.
func fillExec(t testing.TB, db execer, stmts []fillStmt) {
	t.Helper()
	for _, st := range stmts {
		if _, err := db.ExecContext(context.Background(), st.sql, st.args...); err != nil {
			t.Fatalf("fill: %.50q: %v", st.sql, err)
		}
	}
}

// openFill opens a connection of its own to s's database, which it closes
// when the test ends, for a bulk fill: foreign keys unchecked (the fill's
// rows refer to the documents it inserts), no fsync, and a page cache
// that holds all 10^6 chunks, their indexes and their full-text index
// (about 120 MB).
func openFill(t testing.TB, s *Store) *sql.DB {
	t.Helper()
	var path string
	if err := s.d.DB().QueryRow(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&path); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path+"?_pragma=foreign_keys(0)&_pragma=synchronous(OFF)&_pragma=cache_size(-262144)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

type trigger struct{ name, sql string }

// chunkTriggers returns the triggers on docket_chunks, oldest first.
func chunkTriggers(ctx context.Context, tx *sql.Tx) ([]trigger, error) {
	rows, err := tx.QueryContext(ctx, `SELECT name, sql FROM sqlite_schema
WHERE type = 'trigger' AND tbl_name = 'docket_chunks' ORDER BY rowid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ts []trigger
	for rows.Next() {
		var tr trigger
		if err := rows.Scan(&tr.name, &tr.sql); err != nil {
			return nil, err
		}
		ts = append(ts, tr)
	}
	return ts, rows.Err()
}

// TestFillChunks: the bulk fill of TestChunkPlans leaves the database that
// inserting the same chunks with the triggers firing leaves: the same
// schema, the same rows in every table (but the migration records' times, and
// the full-text index's segments, laid out by how it was written), the
// same words at the same places in the full-text index, and the same
// ranks (BM25 reads the index's totals).
func TestFillChunks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	want, got := openPlan(t), openPlan(t)
	fillChunksPlain(t, want, 3, 4)
	fillChunks(t, got, 3, 4)
	queries := []string{
		`SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name`,
		`SELECT term, doc, col, offset FROM temp.fill_vocab ORDER BY term, doc, col, offset`,
		`SELECT rowid, rank FROM docket_chunks_fts WHERE docket_chunks_fts MATCH 'chunk OR word7 OR 5' ORDER BY rank, rowid`,
	}
	tables, err := dump(ctx, want, `SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%'
AND name NOT IN ('docket_migrations', 'docket_repeatables', 'docket_chunks_fts_data', 'docket_chunks_fts_idx') ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		queries = append(queries, "SELECT * FROM "+table)
	}
	for _, s := range []*Store{want, got} {
		if _, err := s.d.DB().ExecContext(ctx, `CREATE VIRTUAL TABLE temp.fill_vocab USING fts5vocab(main, docket_chunks_fts, instance)`); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range queries {
		w, err := dump(ctx, want, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		g, err := dump(ctx, got, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if !slices.Equal(g, w) {
			t.Errorf("%s:\nbulk fill %q\nplain fill %q", q, g, w)
		}
	}
}

// dump returns the rows of q on s's writer, sorted, each its columns
// printed and separated by " | ".
func dump(ctx context.Context, s *Store, q string) ([]string, error) {
	rows, err := s.d.DB().QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		cells := make([]string, len(vals))
		for i, v := range vals {
			cells[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(cells, " | "))
	}
	slices.Sort(out)
	return out, rows.Err()
}
