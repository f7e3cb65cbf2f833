package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/docketq/docket/queue/postgres"
)

// checkPostgres is what serve and worker check of a PostgreSQL database
// before they migrate it and start (the chaos tests of docs/reliability.md
// prove what each check prevents):
//
//   - synchronous_commit must not be off for their sessions: a crash would
//     lose jobs the database acknowledged. They refuse to start, unless
//     allowAsync (--allow-async-commit), with which they log an error and
//     start.
//   - the pool (and its LISTEN connection) should fit in the connection
//     slots left for the role, and so should every Docket process the
//     server's sessions show (postgres.ProcessName) with its pool: processes
//     × (pool + 1) against the slots left plus those the others hold. A
//     warning with the numbers when they do not. Processes not started yet
//     are not seen, and pools may grow later, so fitting now is no promise.
//   - a server with standbys should replicate synchronously: when it has
//     one (a physical walsender or replication slot) and its commits do not
//     wait for one (synchronous_standby_names empty, or synchronous_commit
//     local or off), a failover to that standby can lose jobs the old
//     primary acknowledged. A warning naming the setting (replicationRisk).
func checkPostgres(ctx context.Context, d *postgres.Driver, allowAsync bool, logger *slog.Logger) error {
	if err := postgres.CheckSyncCommit(ctx, d.Pool()); err != nil {
		if !errors.Is(err, postgres.ErrAsyncCommit) {
			return err
		}
		if !allowAsync {
			return fmt.Errorf("%w; to start anyway, at that risk: --allow-async-commit (DOCKET_ALLOW_ASYNC_COMMIT=true)", err)
		}
		logger.Error("ACKNOWLEDGED JOBS MAY BE LOST: started with --allow-async-commit", "err", err)
	}
	r, err := readReplication(ctx, d.Pool())
	if err != nil {
		return err
	}
	if risk := r.risk(); risk != "" {
		logger.Warn("A FAILOVER CAN LOSE ACKNOWLEDGED JOBS: "+risk,
			"standbys", r.Standbys, "physical_slots", r.Slots,
			"synchronous_standby_names", r.SyncStandbyNames, "synchronous_commit", r.SyncCommit)
	}
	b, err := postgres.ReadConnBudget(ctx, d.Pool())
	if err != nil {
		return err
	}
	if !b.FleetFits() {
		logger.Warn("connection budget: "+b.Warning()+"; lower pool_max_conns in the URL, "+
			"or raise max_connections or the role's CONNECTION LIMIT",
			"processes", b.Processes, "want", b.ProcessWant, "slots", b.ProcessFree,
			"this_process_want", b.Want, "free", b.Free, "others_open", b.OtherSessions,
			"max_connections", b.MaxConnections, "reserved", b.Reserved,
			"open", b.Open, "role_limit", b.RoleLimit, "role_open", b.RoleOpen)
	}
	return nil
}
