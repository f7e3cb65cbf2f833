package pgstore

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

func TestDocsError(t *testing.T) {
	t.Parallel()
	other := errors.New("other")
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"no rows", fmt.Errorf("get: %w", pgx.ErrNoRows), docket.ErrNotFound},
		{"unique", &pgconn.PgError{Code: "23505"}, docket.ErrDuplicate},
		{"foreign key", &pgconn.PgError{Code: "23503"}, docket.ErrNotFound},
		{"row-level security", &pgconn.PgError{Code: "42501"}, errIsolation},
		{"check", &pgconn.PgError{Code: "23514"}, docket.ErrInvalid},
		{"read-only transaction", &pgconn.PgError{Code: "25006"}, docket.ErrInvalid},
		{"other", other, other},
	}
	for _, tt := range tests {
		got := docsError(tt.err)
		if !errors.Is(got, tt.want) || !errors.Is(got, tt.err) {
			t.Errorf("%s: docsError = %v, want it to wrap %v and the original", tt.name, got, tt.want)
		}
		// The database's own text is marked, so that the API shows none of it.
		var dbErr *queue.DatabaseError
		var pgErr *pgconn.PgError
		if isPG := errors.As(tt.err, &pgErr); isPG != errors.As(got, &dbErr) {
			t.Errorf("%s: docsError = %v: marked as the database's text %v, want %v", tt.name, got, !isPG, isPG)
		}
	}
	if docsError(nil) != nil {
		t.Error("docsError(nil) != nil")
	}
}
