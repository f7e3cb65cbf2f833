package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/internal/testpg"
	"github.com/docketq/docket/postgres"
)

// startupDB is a fresh database, a superuser pool on it, and a role of
// its own (LOGIN, not a superuser, with the given extra clauses) that
// setup drops at the end.
type startupDB struct {
	connString string
	admin      *pgxpool.Pool
	role       string
}

func newStartupDB(t *testing.T, roleClauses string) startupDB {
	t.Helper()
	connString := testpg.NewDatabase(t)
	admin := openPool(t, connString, 0)
	dbname := admin.Config().ConnConfig.Database
	role := "docket_startup_" + strings.TrimPrefix(dbname, "docket_test_")
	exec(t, admin, `CREATE ROLE `+pgx.Identifier{role}.Sanitize()+` LOGIN NOSUPERUSER `+roleClauses)
	t.Cleanup(func() {
		// After every pool of the test has closed (cleanups run last first).
		_, _ = admin.Exec(context.Background(), `DROP ROLE IF EXISTS `+pgx.Identifier{role}.Sanitize())
	})
	return startupDB{connString: connString, admin: admin, role: role}
}

// openPool opens a pool on connString (as role, when not empty) with at
// most maxConns connections (0: pgx's default).
func openPool(t *testing.T, connString string, maxConns int32, role ...string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		t.Fatal(err)
	}
	if len(role) > 0 {
		cfg.ConnConfig.User = role[0]
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func exec(t *testing.T, pool *pgxpool.Pool, sql string) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// CheckSyncCommit reads the setting as the session sees it: the role's
// setting (ALTER ROLE ... SET) overrides the database's, and only off is
// refused (local still flushes the commit locally before it answers).
func TestCheckSyncCommit(t *testing.T) {
	t.Parallel()
	db := newStartupDB(t, "")
	dbname := db.admin.Config().ConnConfig.Database
	// The test cluster runs with synchronous_commit off (for speed); the
	// database says on, the role off.
	exec(t, db.admin, `ALTER DATABASE `+pgx.Identifier{dbname}.Sanitize()+` SET synchronous_commit = on`)
	exec(t, db.admin, `ALTER ROLE `+pgx.Identifier{db.role}.Sanitize()+` SET synchronous_commit = off`)

	err := postgres.CheckSyncCommit(t.Context(), openPool(t, db.connString, 0, db.role))
	if !errors.Is(err, postgres.ErrAsyncCommit) {
		t.Fatalf("role with synchronous_commit = off: %v, want ErrAsyncCommit", err)
	}
	if want := `ALTER ROLE "` + db.role + `" SET synchronous_commit = on`; !strings.Contains(err.Error(), want) {
		t.Errorf("the error does not say %q: %v", want, err)
	}
	if err := postgres.CheckSyncCommit(t.Context(), openPool(t, db.connString, 0)); err != nil {
		t.Errorf("superuser on the database that says on: %v", err)
	}
	for _, setting := range []string{"local", "remote_write", "on"} {
		if err := postgres.CheckSyncCommit(t.Context(), openPool(t, db.connString+" synchronous_commit="+setting, 0, db.role)); err != nil {
			t.Errorf("synchronous_commit = %s on the connection: %v, want nil", setting, err)
		}
	}
}

// ReadConnBudget counts what is left for the role: its CONNECTION LIMIT
// less its sessions open, and max_connections less the reserved slots and
// every client session open (another role's included, which a role without
// pg_read_all_stats sees without its backend_type).
func TestReadConnBudget(t *testing.T) {
	t.Parallel()
	db := newStartupDB(t, "CONNECTION LIMIT 4")
	held := openPool(t, db.connString, 0, db.role) // one session of the role, held
	if err := held.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := db.admin.Ping(t.Context()); err != nil { // and one of the superuser
		t.Fatal(err)
	}

	// Pool 2 and its LISTEN connection fit in the 3 left for the role.
	b, err := readBudget(t, db.connString, 2, db.role)
	if err != nil {
		t.Fatal(err)
	}
	if b.Want != 3 || b.RoleLimit != 4 || b.RoleOpen != 1 || b.Free != 3 || !b.Fits() {
		t.Errorf("pool 2 of a role limited to 4 with 1 open: %+v; want Want 3, RoleOpen 1, Free 3, Fits", b)
	}
	if b.MaxConnections != 200 || b.Reserved != 3 || b.Open < 2 {
		t.Errorf("server: %+v; want max_connections 200, 3 reserved, at least the 2 sessions held open", b)
	}
	// Pool 4 does not. (The last pool's session may not have ended yet.)
	if b, err = readBudget(t, db.connString, 4, db.role); err != nil || b.Want != 5 || b.Free != b.RoleLimit-b.RoleOpen || b.Fits() {
		t.Errorf("pool 4 + LISTEN in the 3 left: %+v, %v; want Want 5, Free = RoleLimit - RoleOpen, not Fits", b, err)
	}

	// A superuser has no reserved slots and no role limit; a pool larger
	// than the server's max_connections cannot fit.
	b, err = readBudget(t, db.connString, 250)
	if err != nil {
		t.Fatal(err)
	}
	if b.Reserved != 0 || b.RoleLimit != -1 || b.Free != b.MaxConnections-b.Open || b.Fits() {
		t.Errorf("superuser, pool 250: %+v; want Reserved 0, RoleLimit -1, Free = max_connections - open, not Fits", b)
	}
}

// readBudget reads the budget of a fresh pool, which it closes.
func readBudget(t *testing.T, connString string, maxConns int32, role ...string) (postgres.ConnBudget, error) {
	t.Helper()
	pool := openPool(t, connString, maxConns, role...)
	defer pool.Close()
	b, err := postgres.ReadConnBudget(t.Context(), pool)
	t.Logf("pool %d %v: %+v", maxConns, role, b)
	return b, err
}

// OpenWaiting's pool hands idle connections back after IdleConnTimeout,
// unless the URL sets its own.
func TestOpenWaiting_IdleConnTimeout(t *testing.T) {
	t.Parallel()
	connString := testpg.NewDatabase(t)
	for _, tc := range []struct {
		connString string
		want       time.Duration
	}{
		{connString, postgres.IdleConnTimeout},
		{connString + " pool_max_conn_idle_time=5m", 5 * time.Minute},
	} {
		d, err := postgres.OpenWaiting(t.Context(), tc.connString, nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg := d.Pool().Config()
		_ = d.Close()
		if cfg.MaxConnIdleTime != tc.want || cfg.MinConns != 0 {
			t.Errorf("%q: MaxConnIdleTime %s, MinConns %d; want %s and 0", tc.connString, cfg.MaxConnIdleTime, cfg.MinConns, tc.want)
		}
	}
}
