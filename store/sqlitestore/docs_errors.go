package sqlitestore

import (
	"database/sql"
	"errors"
	"fmt"

	sqlite3 "modernc.org/sqlite"
	lib "modernc.org/sqlite/lib"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

// docsError translates SQLite's errors into docket's sentinels, keeping the
// cause in the chain as a queue.DatabaseError. It is the only place that
// does, for the store (the driver's interpretError does it for the engine): a
// foreign key to a missing tenant or document is ErrNotFound, a unique key
// ErrDuplicate, a refused value ErrInvalid.
func docsError(err error) error {
	if err == nil || isTranslated(err) {
		return err
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %w", docket.ErrNotFound, err)
	}
	var se *sqlite3.Error
	if !errors.As(err, &se) {
		return err
	}
	if dbErr := (*queue.DatabaseError)(nil); !errors.As(err, &dbErr) {
		err = &queue.DatabaseError{Err: err}
	}
	switch se.Code() {
	case lib.SQLITE_CONSTRAINT_FOREIGNKEY:
		return fmt.Errorf("%w: %w", docket.ErrNotFound, err)
	case lib.SQLITE_CONSTRAINT_UNIQUE, lib.SQLITE_CONSTRAINT_PRIMARYKEY:
		return fmt.Errorf("%w: %w", docket.ErrDuplicate, err)
	case lib.SQLITE_CONSTRAINT_CHECK, lib.SQLITE_CONSTRAINT_NOTNULL,
		lib.SQLITE_CONSTRAINT_DATATYPE, lib.SQLITE_TOOBIG, lib.SQLITE_MISMATCH:
		return fmt.Errorf("%w: %w", docket.ErrInvalid, err)
	}
	switch se.Code() & 0xff {
	case lib.SQLITE_BUSY, lib.SQLITE_LOCKED:
		return fmt.Errorf("sqlite: database locked outside the driver (another tool writing?): %w", err)
	case lib.SQLITE_READONLY:
		return fmt.Errorf("sqlite: database is read-only: %w", err)
	case lib.SQLITE_FULL:
		return fmt.Errorf("sqlite: disk full: %w", err)
	}
	return err
}

// isTranslated reports whether err already carries a sentinel, so that
// translating twice changes nothing.
func isTranslated(err error) bool {
	for _, s := range []error{docket.ErrDuplicate, docket.ErrNotFound, docket.ErrInvalid, docket.ErrConflict} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
