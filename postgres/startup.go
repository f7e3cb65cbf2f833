package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrAsyncCommit is the error of CheckSyncCommit: the sessions run with
// synchronous_commit = off.
var ErrAsyncCommit = errors.New("synchronous_commit is off: PostgreSQL acknowledges a commit " +
	"before its WAL reaches disk, so a crash of the server can lose jobs it acknowledged")

// CheckSyncCommit reads synchronous_commit as pool's sessions see it (the
// server's setting as the database's, the role's and the connection's
// settings override it) and returns an error wrapping ErrAsyncCommit, which
// says how to fix it for the role, when it is off. Every other value (local,
// remote_write, on, remote_apply) waits for the commit's local WAL flush,
// which is what a crash of this server needs; only off acknowledges first.
func CheckSyncCommit(ctx context.Context, pool *pgxpool.Pool) error {
	var setting, role string
	err := pool.QueryRow(ctx, `SELECT current_setting('synchronous_commit'), session_user`).Scan(&setting, &role)
	if err != nil {
		return fmt.Errorf("read synchronous_commit: %w", err)
	}
	if setting != "off" {
		return nil
	}
	return fmt.Errorf("%w; fix: ALTER ROLE %s SET synchronous_commit = on, or remove what turns it off "+
		"for this session (postgresql.conf, ALTER DATABASE, ALTER ROLE ... IN DATABASE, the connection's options)",
		ErrAsyncCommit, pgx.Identifier{role}.Sanitize())
}

// ConnBudget is what a process's pool may want of the server's connection
// slots, and what is left of them for its role (ReadConnBudget). A
// process cannot see how many others will share the budget: Free counts
// the sessions open when it is read.
type ConnBudget struct {
	Want           int // the pool's MaxConns, plus one for the LISTEN connection
	Free           int // the slots left for the role: the least of the two below
	MaxConnections int // the server's max_connections
	Reserved       int // slots the role may not use (superuser_reserved_connections and reserved_connections, unless a superuser)
	Open           int // client sessions open, not counting the one that read this
	RoleLimit      int // the role's CONNECTION LIMIT, -1 for none
	RoleOpen       int // the role's sessions open, not counting the one that read this
}

// Fits reports whether the pool and its LISTEN connection fit in what is
// left.
func (b ConnBudget) Fits() bool { return b.Want <= b.Free }

// connBudgetSQL reads the budget. A session of another role shows no
// backend_type to a role without pg_read_all_stats, so such a session is
// counted as a client if it has a database: an autovacuum or parallel
// worker of another role may be counted too (an estimate on the safe
// side).
const connBudgetSQL = `
SELECT current_setting('max_connections')::int,
       CASE WHEN r.rolsuper THEN 0
            ELSE current_setting('superuser_reserved_connections')::int
                 + coalesce(current_setting('reserved_connections', true), '0')::int END,
       (SELECT count(*) FROM pg_stat_activity a
         WHERE a.pid <> pg_backend_pid()
           AND (a.backend_type = 'client backend' OR (a.backend_type IS NULL AND a.datid IS NOT NULL))),
       r.rolconnlimit,
       (SELECT count(*) FROM pg_stat_activity a
         WHERE a.pid <> pg_backend_pid() AND a.usename = session_user AND a.backend_type = 'client backend')
FROM pg_roles r WHERE r.rolname = session_user`

// ReadConnBudget reads what is left of the server's connection slots for
// pool's role, for a pool whose only open connection is the one it reads
// with (a pool just opened): the slots under max_connections less those
// reserved and the client sessions open, and under the role's CONNECTION
// LIMIT less its sessions open.
func ReadConnBudget(ctx context.Context, pool *pgxpool.Pool) (ConnBudget, error) {
	b := ConnBudget{Want: int(pool.Config().MaxConns) + 1}
	err := pool.QueryRow(ctx, connBudgetSQL).Scan(&b.MaxConnections, &b.Reserved, &b.Open, &b.RoleLimit, &b.RoleOpen)
	if err != nil {
		return ConnBudget{}, fmt.Errorf("read connection budget: %w", err)
	}
	// The reading session is one of the pool's: it counts in neither Open
	// nor Want's share of what is used.
	b.Free = b.MaxConnections - b.Reserved - b.Open
	if b.RoleLimit >= 0 {
		b.Free = min(b.Free, b.RoleLimit-b.RoleOpen)
	}
	return b, nil
}
