package pgstore_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/store/pgstore"
)

// TestChunkPlans_Explain checks the plan of every chunk and search
// statement with one tenant at 10^6 chunks, as the tenant role under
// row-level security, custom and generic: a document's chunks are reached
// by the primary key, a search's by the GIN index; none reads every chunk
// of the tenant (as a DELETE once did on SQLite).
func TestChunkPlans_Explain(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 10^6 chunks")
	}
	t.Parallel()
	f := setup(t)
	f.exec(`INSERT INTO docket_tenants (id, name, plan) VALUES ('t', 't', 'free')`)
	f.exec(`INSERT INTO docket_documents (id, tenant_id, filename) SELECT 'd' || g, 't', 'f' || g FROM generate_series(0, 999) g`)
	f.fillChunks(`INSERT INTO docket_chunks (tenant_id, document_id, idx, text, model, dimensions)
SELECT 't', 'd' || (g / 1000), g % 1000, 'chunk ' || g || ' word' || (g % 1000) || ' common text', 'm', 0
FROM generate_series(0, 999999) g`)
	f.exec(`INSERT INTO docket_search_configs (tenant_id, config) VALUES ('t', 'english')`)
	f.exec(`ANALYZE`)
	cases := []struct {
		name, sql, params, call string
		want                    *regexp.Regexp
	}{
		{"delete", pgstore.ChunkDeleteSQL, "(text, text)", "('t', 'd7')", regexp.MustCompile(`Index Cond: \(\(?(tenant_id = \S+\) AND \()?document_id = `)},
		{"list", pgstore.ChunkListSQL, "(text, text, int, int)", "('t', 'd7', 0, 10)", regexp.MustCompile(`Index Cond: \(\((tenant_id = \S+\) AND \()?document_id = `)},
		{"search_query", pgstore.SearchQuerySQL, "(text, text[], boolean, text[])", `('t', '{word7}', false, '{""}')`,
			regexp.MustCompile(`Index Only Scan using docket_search_configs_pkey|Seq Scan on docket_search_configs`)},
		{"search_compound", searchBody(f), "(tsquery, text, int, text, int, int)", `('''0-word7''', '', 200, 'm', 2, 2000)`,
			regexp.MustCompile(`Bitmap Index Scan on docket_chunks_tsv`)},
		{"search", searchBody(f), "(tsquery, text, int, text, int, int)", "('word7', '', 200, 'm', 2, 2000)",
			regexp.MustCompile(`Bitmap Index Scan on docket_chunks_tsv`)},
		{"search_document", searchBody(f), "(tsquery, text, int, text, int, int)", "('word7', 'd7', 200, 'm', 2, 2000)",
			regexp.MustCompile(`Index Scan|Bitmap Index Scan`)},
	}
	for _, c := range cases {
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			if strings.HasPrefix(c.name, "search") && c.name != "search_query" && mode == "force_generic_plan" {
				continue // docket_chunk_search runs it with EXECUTE: a custom plan
			}
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				owner := c.name == "search" || c.name == "search_document" || c.name == "search_compound" // docket_chunk_search's statement
				plan := explainAsTenant(t, f, !owner, mode, c.name, c.params, c.sql, c.call)
				t.Logf("%s:\n%s", mode, plan)
				if !c.want.MatchString(plan) {
					t.Errorf("%s plan does not match %s:\n%s", c.name, c.want, plan)
				}
				if strings.Contains(plan, "Seq Scan on docket_chunks") {
					t.Errorf("%s plan scans the chunks:\n%s", c.name, plan)
				}
			})
		}
	}
}

// explainAsTenant is EXPLAIN of the statement prepared as name, run for
// tenant "t" in a tenant transaction: as docket_app under row-level
// security, or as the owner where role is false (docket_chunk_search's
// statement, which runs as the owner).
func explainAsTenant(t *testing.T, f *fixture, role bool, mode, name, params, sql, call string) string {
	t.Helper()
	conn, err := f.d.Pool().Acquire(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	defer conn.Exec(f.ctx, "DEALLOCATE "+name) //nolint:errcheck // cleanup, after the rollback
	tx, err := conn.Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(f.ctx) //nolint:errcheck // read only
	scope := pgstore.ScopeSQL
	if !role {
		scope = `SELECT set_config('app.tenant_id', $1, true)`
	}
	if _, err := tx.Exec(f.ctx, scope, "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(f.ctx, "SET LOCAL plan_cache_mode = "+mode+"; PREPARE "+name+params+" AS "+sql); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.Query(f.ctx, "EXPLAIN EXECUTE "+name+call)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// searchBody is the statement docket_chunk_search runs, from its source.
func searchBody(f *fixture) string {
	f.t.Helper()
	var src string
	if err := f.d.Pool().QueryRow(f.ctx, `SELECT prosrc FROM pg_proc WHERE proname = 'docket_chunk_search'`).Scan(&src); err != nil {
		f.t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)\$q\$(.*)\$q\$`).FindStringSubmatch(src)
	if m == nil {
		f.t.Fatalf("no $q$ statement in docket_chunk_search:\n%s", src)
	}
	return m[1]
}
