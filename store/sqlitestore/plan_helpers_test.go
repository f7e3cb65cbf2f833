package sqlitestore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/docketq/docket/queue/sqlite"
)

// openPlan opens a fresh, migrated store in a temporary directory and
// closes it when the test ends.
func openPlan(t testing.TB) *Store {
	t.Helper()
	ctx := context.Background()
	d, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "plan.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	s := New(d)
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// queryPlan returns the details of query's plan, one line a step.
func queryPlan(ctx context.Context, s *Store, query string, args []any) ([]string, error) {
	rows, err := s.d.DB().QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return nil, err
		}
		plan = append(plan, detail)
	}
	return plan, rows.Err()
}
