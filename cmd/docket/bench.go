package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/docketq/docket/internal/bench"
)

const benchUsage = `usage: docket bench [flags]

Runs benchmark scenarios, each on a fresh store: on PostgreSQL a new
database docket_bench_<random> (dropped afterwards; the user needs CREATEDB),
with no --database-url a new SQLite file in a temporary directory.

scenarios: %s, or all; named only (not in all): %s

fleet starts worker processes (this program, re-executed) that work one
PostgreSQL database together; it needs --database-url.

flags:
`

// runBench runs `docket bench`.
func runBench(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 1 && args[0] == fleetWorkerFlag {
		// A fleet worker process, started by the fleet scenario.
		return bench.RunFleetWorker(ctx, getenv(bench.FleetEnv), os.Stdin, stdout, stderr)
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, benchUsage, strings.Join(bench.Names(), ", "), strings.Join(bench.NamedOnly(), ", "))
		fs.PrintDefaults()
	}
	var cfg bench.Config
	databaseURL := fs.String("database-url", getenv("DATABASE_URL"),
		"PostgreSQL server to benchmark on; empty uses SQLite in a temporary directory [DATABASE_URL]")
	list := fs.String("scenario", "all", "comma-separated scenarios, or all")
	fs.IntVar(&cfg.Jobs, "jobs", 0, "jobs: drained by drain (100000), flooded in fairness (50000), pending in scale's large case (1000000)")
	fs.IntVar(&cfg.Tenants, "tenants", 100, "tenants the jobs of drain and steady are spread over")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "how long steady runs")
	fs.IntVar(&cfg.Workers, "workers", 1000, "jobs one worker runs at once (drain, steady, latency)")
	fs.IntVar(&cfg.Samples, "samples", 1000, "jobs latency times")
	fs.IntVar(&cfg.Backlog, "backlog", 20_000, "pending jobs steady keeps topped up")
	fs.DurationVar(&cfg.PollInterval, "poll-interval", 20*time.Millisecond, "worker poll interval")
	fs.DurationVar(&cfg.FetchCooldown, "fetch-cooldown", 2*time.Millisecond, "least time between two claims of a worker")
	fs.IntVar(&cfg.Claimers, "claimers", 1, "claim loops per worker (queue.QueueConfig.Claimers)")
	fs.IntVar(&cfg.Completers, "completers", 1, "outcome flushers per worker (queue.WorkerConfig.Completers)")
	fleet := fs.String("fleet", "1,2,4,8", "worker process counts fleet runs with, comma-separated")
	fs.StringVar(&cfg.FleetCPUProfile, "fleet-cpuprofile", "", "directory each fleet worker process writes a CPU profile to")
	asJSON := fs.Bool("json", false, "print one JSON object per line per scenario")
	verbose := fs.Bool("v", false, "print progress and the engine's warnings to stderr")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "docket bench: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	names, err := bench.ParseNames(*list)
	if err != nil {
		return err
	}
	if cfg.Fleet, err = bench.ParseFleet(*fleet); err != nil {
		return err
	}
	if slices.Contains(names, "fleet") {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("fleet: %w", err)
		}
		cfg.FleetWorker = []string{exe, "bench", fleetWorkerFlag}
	}
	if *verbose {
		cfg.Progress = stderr
		cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	store, err := benchStore(*databaseURL)
	if err != nil {
		return err
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	return bench.Run(ctx, cfg, store, names, func(r *bench.Result) error {
		if *asJSON {
			return r.WriteJSON(stdout)
		}
		return r.WriteTable(stdout)
	})
}

// fleetWorkerFlag is the hidden argument that makes `docket bench` a fleet
// worker process.
const fleetWorkerFlag = "--fleet-worker"

func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}

func benchStore(url string) (bench.Store, error) {
	switch {
	case url == "":
		return &bench.SQLiteStore{}, nil
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return bench.NewPostgresStore(url), nil
	default:
		return nil, errors.New("--database-url: want postgres://... or postgresql://..., or empty for SQLite")
	}
}
