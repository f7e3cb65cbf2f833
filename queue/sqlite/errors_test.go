package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/docketq/docket/queue"
)

// translate maps SQLite's own errors, met for real, to the sentinels.
func TestTranslate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	exec := func(q string) error {
		_, err := d.writer.ExecContext(ctx, q)
		return err
	}
	if err := exec(`INSERT INTO docket_queues (queue, default_tenant_limit) VALUES ('q', 1)`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"Unique", exec(`INSERT INTO docket_queues (queue, default_tenant_limit) VALUES ('q', 1)`), queue.ErrDuplicate},
		{"Check", exec(`INSERT INTO docket_queues (queue, default_tenant_limit) VALUES ('r', 0)`), queue.ErrInvalid},
		{"NotNull", exec(`INSERT INTO docket_leaders (name) VALUES ('x')`), queue.ErrInvalid},
		{"Strict", exec(`INSERT INTO docket_queues (queue, default_tenant_limit) VALUES ('s', 'many')`), queue.ErrInvalid},
		{"NoRows", sql.ErrNoRows, queue.ErrNotFound},
	} {
		if tc.err == nil {
			t.Fatalf("%s: the statement succeeded", tc.name)
		}
		got := interpretError(tc.err)
		if !errors.Is(got, tc.want) || !errors.Is(got, tc.err) {
			t.Errorf("%s: interpretError(%v) = %v, want %v wrapping the cause", tc.name, tc.err, got, tc.want)
		}
		// SQLite's own text is marked, so that the API shows none of it.
		var dbErr *queue.DatabaseError
		if isDB := tc.name != "NoRows"; errors.As(got, &dbErr) != isDB {
			t.Errorf("%s: interpretError = %v: marked as the database's text %v, want %v", tc.name, got, !isDB, isDB)
		}
	}
	if err := interpretError(leaseLost(queue.Lease{JobID: 1})); !errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("interpretError changed a sentinel: %v", err)
	}
}
