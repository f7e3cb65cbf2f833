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
	var (
		cfg                                                            bench.Config
		databaseURL, list, fleet, scaleTenants, cpuProfile, memProfile string
		asJSON, verbose                                                bool
	)
	e := &envFlags{fs: fs, getenv: getenv}
	fs.StringVar(&databaseURL, "database-url", getenv("DATABASE_URL"),
		"PostgreSQL server to benchmark on; empty uses SQLite in a temporary directory [DATABASE_URL]")
	e.stringVar(&list, "scenario", "DOCKET_BENCH_SCENARIO", "all", "comma-separated scenarios, or all")
	e.intVar(&cfg.Jobs, "jobs", "DOCKET_BENCH_JOBS", 0, "jobs: drained by drain (100000), flooded in fairness (50000), pending in scale's large case (1000000)")
	e.intVar(&cfg.Tenants, "tenants", "DOCKET_BENCH_TENANTS", 100, "tenants the jobs of drain and steady are spread over")
	e.durationVar(&cfg.Duration, "duration", "DOCKET_BENCH_DURATION", 10*time.Second, "how long steady counts completions")
	e.durationVar(&cfg.Warmup, "warmup", "DOCKET_BENCH_WARMUP", 5*time.Second, "how long steady works before it starts counting (0: not at all)")
	e.intVar(&cfg.Workers, "workers", "DOCKET_BENCH_WORKERS", 1000, "jobs one worker runs at once (drain, steady, latency)")
	e.intVar(&cfg.Samples, "samples", "DOCKET_BENCH_SAMPLES", 1000, "jobs latency times")
	e.intVar(&cfg.Backlog, "backlog", "DOCKET_BENCH_BACKLOG", 20_000, "pending jobs steady keeps topped up")
	e.durationVar(&cfg.PollInterval, "poll-interval", "DOCKET_BENCH_POLL_INTERVAL", 20*time.Millisecond, "worker poll interval")
	e.durationVar(&cfg.FetchCooldown, "fetch-cooldown", "DOCKET_BENCH_FETCH_COOLDOWN", 2*time.Millisecond, "least time between two claims of a worker")
	e.intVar(&cfg.Claimers, "claimers", "DOCKET_BENCH_CLAIMERS", 0, "claim loops per worker (queue.QueueConfig.Claimers; 0: the engine's default, GOMAXPROCS/4 from 1 to 4)")
	e.intVar(&cfg.Completers, "completers", "DOCKET_BENCH_COMPLETERS", 0, "outcome flushers per worker (queue.WorkerConfig.Completers; 0: the engine's default)")
	e.stringVar(&fleet, "fleet", "DOCKET_BENCH_FLEET", "1,2,4,8", "worker process counts fleet runs with, comma-separated")
	e.stringVar(&scaleTenants, "scale-tenants", "DOCKET_BENCH_SCALE_TENANTS", "10,10000", "tenant counts scale runs with, comma-separated, each on a fresh store")
	e.stringVar(&cfg.FleetCPUProfile, "fleet-cpuprofile", "DOCKET_BENCH_FLEET_CPUPROFILE", "", "directory each fleet worker process writes a CPU profile to")
	e.boolVar(&asJSON, "json", "DOCKET_BENCH_JSON", false, "print one JSON object per line per scenario")
	e.boolVar(&verbose, "v", "DOCKET_BENCH_VERBOSE", false, "print progress and the engine's warnings to stderr")
	e.stringVar(&cpuProfile, "cpuprofile", "DOCKET_BENCH_CPUPROFILE", "", "write a CPU profile of the whole run to this file")
	e.stringVar(&memProfile, "memprofile", "DOCKET_BENCH_MEMPROFILE", "", "write a profile of the whole run's allocations to this file")
	if err := fs.Parse(args); err != nil {
		return parseError(err)
	}
	if err := e.err(); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "docket bench: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	names, err := bench.ParseNames(list)
	if err != nil {
		return err
	}
	if cfg.Fleet, err = bench.ParseFleet(fleet); err != nil {
		return err
	}
	if cfg.ScaleTenants, err = bench.ParseScaleTenants(scaleTenants); err != nil {
		return err
	}
	if slices.Contains(names, "fleet") {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("fleet: %w", err)
		}
		cfg.FleetWorker = []string{exe, "bench", fleetWorkerFlag}
	}
	if verbose {
		cfg.Progress = stderr
		cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	store, err := benchStore(databaseURL)
	if err != nil {
		return err
	}
	if cpuProfile != "" {
		stop, err := startCPUProfile(cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	if memProfile != "" {
		defer writeAllocProfile(memProfile, stderr)
	}
	return bench.Run(ctx, cfg, store, names, func(r *bench.Result) error {
		if asJSON {
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

// writeAllocProfile writes the allocations sampled since the start
// (pprof's allocs profile) to path; a failure is reported, not returned:
// the benchmark's results are printed already.
func writeAllocProfile(path string, stderr io.Writer) {
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup("allocs").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "docket bench: memory profile: %v\n", err)
	}
}

func benchStore(url string) (bench.Store, error) {
	switch {
	case url == "":
		return &bench.SQLiteStore{}, nil
	case isPostgres(url):
		return bench.NewPostgresStore(url), nil
	default:
		return nil, errors.New("--database-url: want postgres://..., postgresql://... or host=..., or empty for SQLite")
	}
}
