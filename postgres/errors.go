package postgres

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketq/docket/queue/driver"
)

// interpretError translates pgx and PostgreSQL errors into the queue's
// sentinels, keeping the original in the chain as a driver.DatabaseError. It
// is the only place that does.
func interpretError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: %w", driver.ErrNotFound, err)
	}
	err = asDatabaseError(err)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23514", // check_violation
			"23502", // not_null_violation
			"22P02", // invalid_text_representation
			"22023", // invalid_parameter_value
			"22003", // numeric_value_out_of_range
			"22001", // string_data_right_truncation
			"2202E", // array_subscript_error
			"22004", // null_value_not_allowed
			"22021", // character_not_in_repertoire: a NUL byte or invalid UTF-8 in text
			"22P05": // untranslatable_character: \u0000 in jsonb
			return fmt.Errorf("%w: %w", driver.ErrInvalid, err)
		case "23505": // unique_violation
			return fmt.Errorf("%w: %w", driver.ErrDuplicate, err)
		}
	}
	return err
}

// asDatabaseError marks a PostgreSQL error as the database's own text
// (driver.DatabaseError); other errors pass unchanged.
func asDatabaseError(err error) error {
	var pgErr *pgconn.PgError
	var dbErr *driver.DatabaseError
	if errors.As(err, &pgErr) && !errors.As(err, &dbErr) {
		return &driver.DatabaseError{Err: err}
	}
	return err
}

// isLockTimeout reports whether err is lock_not_available (55P03), which a
// lock_timeout raises.
func isLockTimeout(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55P03"
}

// isDeadlock reports whether err is PostgreSQL's deadlock_detected (40P01):
// the server aborted the transaction to break a cycle of lock waits.
func isDeadlock(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "40P01"
}
