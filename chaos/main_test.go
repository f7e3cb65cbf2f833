package chaos

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
	"github.com/docketq/docket/store/pgstore"
)

var (
	// cluster is the PostgreSQL cluster of this test process.
	cluster *pgtest.Cluster
	// workerBin is the chaosworker binary built for this test process.
	workerBin string
)

// TestMain builds the worker binary and starts the shared cluster. The
// smoke tier's scenarios overlap where they cannot disturb each other's
// bounds: see schedule_test.go. Running every scenario two at a time (a
// layout tried before) cut the tier from ~395 s to ~235 s, but made timing
// bounds fail beside a CPU-loading neighbour that hold alone (a job of
// LISTEN killed started after 2.07 s against poll + 300 ms; a SIGSTOPped
// worker's eighth late write not seen within 10 s; 31's reserved-queue p95
// 1.54 s beside 16's crash recovery): those run alone. The full-size
// variants (full_test.go, -tags chaos) are sequential, so they run alone
// too, before the smoke scenarios.
func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	flag.Parse()
	if err := setParallelDefault(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if testing.Short() {
		return m.Run() // every test skips itself
	}
	dir, err := os.MkdirTemp("", "docket-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if workerBin, err = buildWorker(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// TCP for the partition's fault proxy and pg_stat_statements for the
	// thundering herd: every scenario that does not restart, crash, skew or budget its
	// server shares this cluster (a cluster's start is seconds of the
	// smoke tier's three minutes).
	cluster, err = pgtest.Start(pgtest.Options{MaxConnections: 300, Template: migrate, TCP: true,
		Settings: map[string]string{"shared_preload_libraries": "'pg_stat_statements'"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if err := cluster.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// buildWorker builds cmd/chaosworker (without -race, to keep the children
// fast) into dir.
func buildWorker(dir string) (string, error) {
	// go test puts its own GOROOT/bin first on the test binary's PATH.
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("chaos: no go command to build the worker: %w", err)
	}
	bin := filepath.Join(dir, "chaosworker")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", bin, "./cmd/chaosworker")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("chaos: build worker: %w\n%s", err, out)
	}
	return bin, nil
}

// ledgerSchema is the oracle's tables: executions (one row per handler
// start, written before anything else), effects (one per completed ledger
// job, written in the completing transaction), maintenance_runs (one per
// maintenance sweep of a worker run with -audit-maintenance) and enqueues
// (enqueue times by the database clock).
const ledgerSchema = `
CREATE TABLE executions (
	id         bigserial   PRIMARY KEY,
	job_id     bigint      NOT NULL,
	attempt    int         NOT NULL,
	worker_pid int         NOT NULL,
	worker_id  text        NOT NULL,
	kind       text        NOT NULL,
	started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	entered_at timestamptz -- when the handler began, on the worker's clock (the same host's)
);
CREATE INDEX executions_job ON executions (job_id);
CREATE TABLE effects (
	job_id     bigint      PRIMARY KEY,
	attempt    int         NOT NULL,
	worker_pid int         NOT NULL,
	done_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE maintenance_runs (
	id         bigserial   PRIMARY KEY,
	worker_pid int         NOT NULL,
	task       text        NOT NULL,
	jobs       int         NOT NULL,
	done_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE enqueues (
	job_id      bigint      PRIMARY KEY,
	tenant_id   text        NOT NULL,
	enqueued_at timestamptz NOT NULL DEFAULT clock_timestamp()
);`

// migrate prepares the template database: the engine's and the document
// store's schema, and the ledger tables.
func migrate(connString string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := postgres.Open(ctx, connString)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := pgstore.New(d).Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := d.Pool().Exec(ctx, ledgerSchema); err != nil {
		return fmt.Errorf("ledger schema: %w", err)
	}
	return nil
}
