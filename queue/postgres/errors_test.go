package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"

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

// TestInterpretError_Unavailable: a server that cannot be reached, or that
// ends or refuses the session (shutdown, recovery, too many connections),
// is ErrUnavailable; the caller's own cancellation and other errors are
// not.
func TestInterpretError_Unavailable(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	// A port nothing listens on: the connection is refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	_, connErr := pgconn.Connect(ctx, "postgres://docket@"+addr+"/docket?connect_timeout=5")
	if connErr == nil {
		t.Fatal("connected to a closed port")
	}
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"connection refused":         {connErr, true},
		"admin shutdown":             {&pgconn.PgError{Code: "57P01"}, true},
		"cannot connect now":         {&pgconn.PgError{Code: "57P03"}, true},
		"connection failure":         {&pgconn.PgError{Code: "08006"}, true},
		"too many connections":       {&pgconn.PgError{Code: "53300"}, true},
		"connection lost":            {fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		"unique violation":           {&pgconn.PgError{Code: "23505"}, false},
		"cancelled":                  {fmt.Errorf("query: %w", context.Canceled), false},
		"deadline, with a net error": {errors.Join(context.DeadlineExceeded, &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}), false},
	} {
		got := interpretError(tc.err)
		if errors.Is(got, queue.ErrUnavailable) != tc.want {
			t.Errorf("%s: interpretError(%v) = %v, ErrUnavailable %t", name, tc.err, got, tc.want)
		}
	}
}
