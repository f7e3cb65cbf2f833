package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

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
	if Unavailable(err) {
		return fmt.Errorf("%w: %w", driver.ErrUnavailable, asDatabaseError(err))
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

// Unavailable reports whether err says the server could not be reached or
// would not take the statement now: a failed connection attempt, a
// connection lost, or the server shutting down, starting or in recovery
// (SQLSTATE classes 08 and 57P, too_many_connections). A cancelled or
// expired context is the caller's, never the server's: not unavailable.
func Unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "57P") || pgErr.Code == "53300"
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
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
