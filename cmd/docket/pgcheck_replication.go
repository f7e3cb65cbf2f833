package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// replication is what a server says of its standbys and of how long its
// commits wait for them, as this process's sessions see it.
type replication struct {
	// Standbys is the physical walsenders streaming to a standby now
	// (pg_stat_activity's walsenders without a database; logical ones,
	// which feed subscribers rather than failover targets, have one).
	Standbys int
	// Slots is the physical replication slots: a standby that is
	// disconnected for now keeps its slot.
	Slots int
	// SyncStandbyNames is synchronous_standby_names: empty, commits wait
	// for no standby.
	SyncStandbyNames string
	// SyncCommit is the session's synchronous_commit.
	SyncCommit string
}

// readReplication reads the server's replication settings.
func readReplication(ctx context.Context, pool *pgxpool.Pool) (replication, error) {
	var r replication
	err := pool.QueryRow(ctx, `
SELECT (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'walsender' AND datid IS NULL),
       (SELECT count(*) FROM pg_replication_slots WHERE slot_type = 'physical'),
       current_setting('synchronous_standby_names'),
       current_setting('synchronous_commit')`).Scan(&r.Standbys, &r.Slots, &r.SyncStandbyNames, &r.SyncCommit)
	if err != nil {
		return r, fmt.Errorf("read replication settings: %w", err)
	}
	return r, nil
}

// risk says why a failover to one of the server's standbys can lose
// commits the server acknowledged, or "" when it cannot: the server has no
// standby (a failover has nothing to promote), or every commit waits until
// a standby has the commit (synchronous_standby_names set and
// synchronous_commit remote_write, on or remote_apply; remote_write loses
// a commit only when the standby's operating system crashes too).
func (r replication) risk() string {
	if r.Standbys == 0 && r.Slots == 0 {
		return ""
	}
	switch {
	case strings.TrimSpace(r.SyncStandbyNames) == "":
		return "the server has a standby but replicates asynchronously (synchronous_standby_names is empty): " +
			"a commit is acknowledged before any standby has it, and a standby promoted after a crash of this " +
			"server lacks what it had not received; set synchronous_standby_names (docs/operations.md)"
	case r.SyncCommit == "off" || r.SyncCommit == "local":
		return fmt.Sprintf("the server has a synchronous standby but this session's synchronous_commit is %s: "+
			"its commits do not wait for the standby, and a standby promoted after a crash of this server lacks "+
			"what it had not received; set synchronous_commit = on for Docket's role (docs/operations.md)", r.SyncCommit)
	}
	return ""
}
