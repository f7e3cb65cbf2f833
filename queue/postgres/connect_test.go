package postgres_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

func TestTransient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "53300"}, true}, // too many connections
		{&pgconn.PgError{Code: "57P03"}, true}, // starting up
		{&pgconn.PgError{Code: "08006"}, true},
		{&pgconn.PgError{Code: "28P01"}, false}, // wrong password
		{&pgconn.PgError{Code: "3D000"}, false}, // no such database
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{errors.New("something else"), false},
	} {
		if got := postgres.Transient(tc.err); got != tc.want {
			t.Errorf("Transient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// WaitReady retries a server that is not there (connection refused) with
// growing waits until its context ends, and returns at once for a database
// that does not exist (nothing to wait for).
func TestWaitReady(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // a port nobody listens on: connections are refused
	host, port, _ := net.SplitHostPort(addr)
	pool, err := pgxpool.New(t.Context(), "host="+host+" port="+port+" user=postgres dbname=x connect_timeout=1")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
	defer cancel()
	var waits []time.Duration
	err = postgres.WaitReady(ctx, pool, func(_ error, wait time.Duration) { waits = append(waits, wait) })
	if !errors.Is(err, context.DeadlineExceeded) || len(waits) < 3 || waits[1] != 2*waits[0] {
		t.Fatalf("WaitReady on a refused port: %v after waits %v; want the deadline after doubling waits", err, waits)
	}

	missing, err := pgxpool.ParseConfig(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	missing.ConnConfig.Database = "docket_no_such_database"
	pool2, err := pgxpool.NewWithConfig(t.Context(), missing)
	if err != nil {
		t.Fatal(err)
	}
	defer pool2.Close()
	var retries atomic.Int32
	start := time.Now()
	err = postgres.WaitReady(t.Context(), pool2, func(error, time.Duration) { retries.Add(1) })
	if err == nil || !strings.Contains(err.Error(), "3D000") || retries.Load() != 0 {
		t.Fatalf("WaitReady on a missing database: %v after %d retries (%s); want 3D000 at once", err, retries.Load(), time.Since(start))
	}
}
