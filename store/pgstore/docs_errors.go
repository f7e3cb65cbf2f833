package pgstore

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/postgres"
)

// errIsolation is the error of a statement that row-level security or the
// app role's privileges refused: a bug in a tenant-scoped path, never an
// answer for a client.
var errIsolation = errors.New("refused by tenant isolation (row-level security or privileges)")

// docsError translates pgx and PostgreSQL errors of the document store
// into docket's sentinels, keeping the original in the chain (as a
// queue.DatabaseError). It is the
// only place that does, for the store (the driver's interpretError does
// it for the engine).
func docsError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: %w", docket.ErrNotFound, err)
	}
	if postgres.Unavailable(err) {
		return fmt.Errorf("%w: %w", docket.ErrUnavailable, err)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err
	}
	var dbErr *queue.DatabaseError
	if !errors.As(err, &dbErr) {
		err = &queue.DatabaseError{Err: err}
	}
	switch pgErr.Code {
	case "23505": // unique_violation
		return fmt.Errorf("%w: %w", docket.ErrDuplicate, err)
	case "23503": // foreign_key_violation: an unknown tenant or document
		return fmt.Errorf("%w: %w", docket.ErrNotFound, err)
	case "42501": // insufficient_privilege, raised by row-level security too
		return fmt.Errorf("%w: %w", errIsolation, err)
	case "25006", // read_only_sql_transaction: a write in ReadTenant
		"23514", "23502", "22P02", "22023", "22003", "22001", "22004":
		return fmt.Errorf("%w: %w", docket.ErrInvalid, err)
	}
	return err
}
