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
// slots, and what is left of them for its role (ReadConnBudget); and the
// same for every live Docket process sharing them, as far as the server's
// sessions show them (ProcessName). A process not started yet, or one whose
// sessions carry a name of its user's, is not seen: the processes' figures
// are a floor of what the fleet will want.
type ConnBudget struct {
	Want           int // the pool's MaxConns, plus one for the LISTEN connection
	Free           int // the slots left for the role: the least of the two below
	MaxConnections int // the server's max_connections
	Reserved       int // slots the role may not use (superuser_reserved_connections and reserved_connections, unless a superuser)
	Open           int // client sessions open, not counting the one that read this
	RoleLimit      int // the role's CONNECTION LIMIT, -1 for none
	RoleOpen       int // the role's sessions open, not counting the one that read this

	// Docket processes, this one included, on the side that binds (the
	// server's slots, or the role's CONNECTION LIMIT and then only the
	// processes of the role): each wants its pool (read from its
	// ProcessName; this one's when the name does not say) plus its LISTEN
	// connection, or the sessions it has open if more.
	Processes     int // the processes counted
	ProcessWant   int // what they want together
	ProcessFree   int // the slots for them: those left, plus those the others hold
	OtherSessions int // the sessions the other processes hold

	pools map[int]int // processes by pool, for Warning
}

// Fits reports whether the pool and its LISTEN connection fit in what is
// left.
func (b ConnBudget) Fits() bool { return b.Want <= b.Free }

// FleetFits reports whether every Docket process seen, this one included,
// fits with its pool and LISTEN connection in the slots left for them all.
// It is false whenever Fits is.
func (b ConnBudget) FleetFits() bool { return b.ProcessWant <= b.ProcessFree }

// Warning says, when the processes do not fit, by how much: "6 processes ×
// (pool 5 + 1) = 36 connections > 15 slots"; "" when they fit.
func (b ConnBudget) Warning() string {
	if b.FleetFits() {
		return ""
	}
	return fmt.Sprintf("%s = %d connections > %d slots", describeProcesses(b.Processes, b.pools), b.ProcessWant, b.ProcessFree)
}

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

// processSessionsSQL counts the client sessions of the other Docket
// processes (ProcessName; $1 is this process's name), per process and
// whether of this role. application_name is shown for every role's
// sessions.
const processSessionsSQL = `
SELECT a.application_name, a.usename = session_user, count(*)::int
FROM pg_stat_activity a
WHERE a.pid <> pg_backend_pid() AND a.application_name LIKE '` + processNamePrefix + `%' AND a.application_name <> $1
  AND (a.backend_type = 'client backend' OR (a.backend_type IS NULL AND a.datid IS NOT NULL))
GROUP BY 1, 2`

// ReadConnBudget reads what is left of the server's connection slots for
// pool's role, for a pool whose only open connection is the one it reads
// with (a pool just opened): the slots under max_connections less those
// reserved and the client sessions open, and under the role's CONNECTION
// LIMIT less its sessions open; and what the other live Docket processes
// (ProcessName) hold and want of them.
func ReadConnBudget(ctx context.Context, pool *pgxpool.Pool) (ConnBudget, error) {
	cfg := pool.Config()
	b := ConnBudget{Want: int(cfg.MaxConns) + 1}
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
	rows, err := pool.Query(ctx, processSessionsSQL, cfg.ConnConfig.RuntimeParams["application_name"])
	if err != nil {
		return ConnBudget{}, fmt.Errorf("read connection budget: %w", err)
	}
	others, err := pgx.CollectRows(rows, pgx.RowToStructByPos[processSessions])
	if err != nil {
		return ConnBudget{}, fmt.Errorf("read connection budget: %w", err)
	}
	b.countProcesses(int(cfg.MaxConns), others)
	return b, nil
}

// processSessions is one other process's sessions of one role.
type processSessions struct {
	Name     string
	SameRole bool
	Sessions int
}

// countProcesses sets the processes' figures of b from the others'
// sessions: on the server's side, then, under a CONNECTION LIMIT, on the
// role's, keeping the side that fits worse.
func (b *ConnBudget) countProcesses(pool int, others []processSessions) {
	side := func(sameRoleOnly bool, free int) ConnBudget {
		sessions := map[string]int{} // by process: its rows of either role
		for _, o := range others {
			if !sameRoleOnly || o.SameRole {
				sessions[o.Name] += o.Sessions
			}
		}
		s := ConnBudget{Processes: 1 + len(sessions), ProcessWant: b.Want, ProcessFree: free, pools: map[int]int{pool: 1}}
		for name, n := range sessions {
			p, ok := processPool(name)
			if !ok {
				p = pool
			}
			s.pools[p]++
			s.ProcessWant += max(p+1, n)
			s.ProcessFree += n
			s.OtherSessions += n
		}
		return s
	}
	s := side(false, b.MaxConnections-b.Reserved-b.Open)
	if b.RoleLimit >= 0 {
		if r := side(true, b.RoleLimit-b.RoleOpen); r.ProcessWant-r.ProcessFree > s.ProcessWant-s.ProcessFree {
			s = r
		}
	}
	b.Processes, b.ProcessWant, b.ProcessFree, b.OtherSessions, b.pools = s.Processes, s.ProcessWant, s.ProcessFree, s.OtherSessions, s.pools
}
