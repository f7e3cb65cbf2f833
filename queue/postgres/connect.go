package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Back-off of WaitReady: the first wait, and the longest.
const (
	readyFirstWait = 100 * time.Millisecond
	readyMaxWait   = 5 * time.Second
)

// IdleConnTimeout is how long a connection of OpenWaiting's pool stays open
// unused (pgx's MaxConnIdleTime; its default is 30 minutes) unless the URL
// sets pool_max_conn_idle_time. On a server whose connection budget is
// tight, a process's idle connections are slots another process may be
// waiting for (one started late waits until a slot comes free): this hands
// them back within a minute or two (pgx closes idle connections on its
// health check, every minute), and leaves the pool's minimum open. A busy
// pool keeps its connections.
const IdleConnTimeout = time.Minute

// OpenWaiting is Open for a long-running process (a worker, a server): while
// the database refuses for a reason that passes by itself (every connection
// slot taken, the server starting up or shutting down, the network), it
// waits and tries again (see WaitReady) until ctx ends, instead of failing
// at once and leaving a supervisor to restart the process in a loop.
// onRetry, when not nil, hears each failure and the wait before the next
// try. Its pool closes connections idle for IdleConnTimeout, and its
// sessions are named ProcessName(kind, pool) unless connString names them
// (application_name): kind names the program, such as "worker".
func OpenWaiting(ctx context.Context, connString, kind string, onRetry func(err error, wait time.Duration)) (*Driver, error) {
	cfg, err := waitingPoolConfig(connString, kind)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	if err := WaitReady(ctx, pool, onRetry); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	d := New(pool)
	d.owned = true
	return d, nil
}

// waitingPoolConfig is OpenWaiting's pool configuration: connString's, with
// IdleConnTimeout unless it sets pool_max_conn_idle_time, and the sessions
// named after the process (NameProcess).
func waitingPoolConfig(connString, kind string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(connString, "pool_max_conn_idle_time") {
		cfg.MaxConnIdleTime = IdleConnTimeout
	}
	NameProcess(cfg, kind)
	return cfg, nil
}

// WaitReady pings pool until the database answers. A failure that may pass
// by itself (Transient) is retried after a wait that starts at 100 ms and
// doubles up to 5 s, until ctx ends; onRetry, when not nil, hears each one.
// Any other failure (a wrong password, a database that does not exist) is
// returned at once.
func WaitReady(ctx context.Context, pool *pgxpool.Pool, onRetry func(err error, wait time.Duration)) error {
	wait := readyFirstWait
	for {
		err := pool.Ping(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || !Transient(err) {
			return err
		}
		if onRetry != nil {
			onRetry(err, wait)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return fmt.Errorf("%w (still waiting for the database: %w)", ctx.Err(), err)
		}
		wait = min(2*wait, readyMaxWait)
	}
}

// Transient reports whether err, from connecting to PostgreSQL, may pass by
// itself: the server refusing for now (SQLSTATE class 53, insufficient
// resources, such as 53300 too many connections; 57P03 cannot connect now,
// while it starts; 57P01 and 57P02, shut down by an administrator or a
// crash), a connection exception (class 08), or the network (refused,
// reset, unreachable, timed out, a name not resolved yet).
func Transient(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case len(pgErr.Code) == 5 && (pgErr.Code[:2] == "53" || pgErr.Code[:2] == "08"):
			return true
		case pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03":
			return true
		}
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr)
}
