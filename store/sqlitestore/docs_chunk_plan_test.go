package sqlitestore

import (
	"context"
	"strings"
	"testing"
)

// TestChunkPlans checks the plan of every chunk and search statement with
// one tenant at 10^6 chunks (a DELETE of a document's chunks once read the
// tenant's index and walked all its chunks, ~1.1 s for a 2-chunk document
// at 1.18 M). Each must reach its rows through the document's index or the
// search index, never a scan of the tenant or of the table.
func TestChunkPlans(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 10^6 chunks")
	}
	t.Parallel()
	ctx := context.Background()
	d := openFilled(t, 1000, 1000)
	for _, analyze := range []bool{false, true} {
		if analyze {
			if _, err := d.d.DB().ExecContext(ctx, "ANALYZE"); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			name, sql string
			args      []any
			want      string // an index the plan must use
		}{
			{"ChunkDelete", chunkDeleteSQL, []any{"t", "d7"}, "docket_chunks_document"},
			{"ChunkList", chunkListSQL, []any{"t", "d7", 0, 10}, "docket_chunks_document"},
			{"DocExists", docExistsSQL, []any{"t", "d7"}, "sqlite_autoindex_docket_documents_1"},
			{"ChunkSearch", chunkSearchSQL, []any{"m", 2, `"word7"`, "t", "", 200, 2000}, "COVERING INDEX docket_chunks_match"},
			{"ChunkSearchCompound", chunkSearchSQL, []any{"m", 2, "compounds : \"x\uE000achse\"", "t", "", 200, 2000}, "COVERING INDEX docket_chunks_match"},
			{"ChunkSearchDocument", chunkSearchSQL, []any{"m", 2, `"word7"`, "t", "d7", 200, 2000}, "VIRTUAL TABLE INDEX"},
		} {
			plan, err := queryPlan(ctx, d, tc.sql, tc.args)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			all := strings.Join(plan, "\n")
			t.Logf("%s (analyzed %t):\n%s", tc.name, analyze, all)
			if !strings.Contains(all, tc.want) {
				t.Errorf("%s (analyzed %t): plan does not use %s:\n%s", tc.name, analyze, tc.want, all)
			}
			for _, step := range plan {
				if strings.HasPrefix(step, "SCAN ") && !strings.Contains(step, "VIRTUAL TABLE") && step != "SCAN top" && !strings.HasPrefix(step, "SCAN (subquery") ||
					strings.Contains(step, "(tenant_id=?)") {
					t.Errorf("%s (analyzed %t): %q reads the table or the tenant's rows:\n%s", tc.name, analyze, step, all)
				}
			}
		}
	}
}
