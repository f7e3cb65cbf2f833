package postgres

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketq/docket/queue"
)

// TestInterpretError_Unique: a unique violation is ErrDuplicate, only, and
// keeps the database's text marked as such.
func TestInterpretError_Unique(t *testing.T) {
	t.Parallel()
	var dbErr *queue.DatabaseError
	if got := interpretError(&pgconn.PgError{Code: "23505", Message: "duplicate key"}); !errors.Is(got, queue.ErrDuplicate) || errors.Is(got, queue.ErrConflict) || !errors.As(got, &dbErr) {
		t.Errorf("interpretError(unique violation) = %v, want ErrDuplicate (only) and a queue.DatabaseError", got)
	}
}
