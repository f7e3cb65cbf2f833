package sqlite

import (
	"database/sql"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/docketq/docket/queue/driver"
)

// ErrLocked means another process, or another Driver in this one, has the
// database open: the SQLite store serves one process only.
var ErrLocked = errors.New("sqlite: database in use by another process")

func lockedError(path, holder string) error {
	who := "another process"
	if holder != "" {
		who = "process " + holder
	}
	return fmt.Errorf("%w: %s holds %s.lock. The embedded SQLite store serves one process; "+
		"stop the other process, or share one queue between processes and hosts with PostgreSQL "+
		"(set DATABASE_URL=postgres://...)", ErrLocked, who, path)
}

// interpretError maps SQLite's errors to the queue's sentinels, keeping the
// cause in the chain as a driver.DatabaseError. Every error the driver returns passes through it.
func interpretError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %w", driver.ErrNotFound, err)
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	if dbErr := (*driver.DatabaseError)(nil); !errors.As(err, &dbErr) {
		err = &driver.DatabaseError{Err: err}
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return fmt.Errorf("%w: %w", driver.ErrDuplicate, err)
	case sqlite3.SQLITE_CONSTRAINT_CHECK, sqlite3.SQLITE_CONSTRAINT_NOTNULL,
		sqlite3.SQLITE_CONSTRAINT_DATATYPE, sqlite3.SQLITE_TOOBIG, sqlite3.SQLITE_MISMATCH:
		return fmt.Errorf("%w: %w", driver.ErrInvalid, err)
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return fmt.Errorf("sqlite: database locked outside the driver (another tool writing?): %w", err)
	case sqlite3.SQLITE_READONLY:
		return fmt.Errorf("sqlite: database is read-only: %w", err)
	case sqlite3.SQLITE_FULL:
		return fmt.Errorf("sqlite: disk full: %w", err)
	}
	return err
}

// leaseLost is the error of a lease-checked write that matched no row.
func leaseLost(l driver.Lease) error {
	return fmt.Errorf("%w: job %d attempt %d", driver.ErrLeaseLost, l.JobID, l.Attempt)
}
