// Command riverbench runs Docket's drain, steady, latency and fleet benchmark
// scenarios against River (github.com/riverqueue/river), so the two can be
// compared on the same PostgreSQL server with the same figures.
//
//	riverbench --database-url URL --scenario drain,steady,latency [--jobs N]
//	           [--duration D] [--workers W] [--samples S] [--json] [--defaults]
//	riverbench --database-url URL --scenario fleet [--fleet 1,2,4,8] ...
//
// Each scenario runs on a fresh database (river_bench_<random>, created,
// migrated with rivermigrate, and dropped afterwards) with a no-op worker.
// By default River is tuned as its own benchmark (cmd/river/riverbench)
// tunes it: FetchCooldown 2ms, FetchPollInterval 20ms, 2,000 workers.
// --defaults uses River's defaults instead (FetchCooldown 100ms,
// FetchPollInterval 1s) with 100 workers, the value River's examples use.
// The output has the keys of `docket bench`. fleet (K worker processes,
// this program re-executed, on one database; see fleet.go) runs only when
// named, as in docket bench. drain and steady also report the WAL bytes and
// transactions per job of the whole scenario, measured as docket bench
// measures them.
//
// It is a module of its own so that Docket does not depend on River.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "riverbench:", err)
		os.Exit(1)
	}
}

// config is what the flags set.
type config struct {
	databaseURL   string
	jobs          int
	duration      time.Duration
	warmup        time.Duration
	workers       int
	samples       int
	fetchCooldown time.Duration
	pollInterval  time.Duration
	defaults      bool
	fleet         []int
	// fleetCPUProfile is a directory each fleet worker process writes a
	// CPU profile to.
	fleetCPUProfile string
	logger          *slog.Logger
	progress        io.Writer
}

var scenarioNames = []string{"drain", "steady", "latency"}

// namedOnly are the scenarios "all" leaves out.
var namedOnly = []string{"fleet"}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 1 && args[0] == fleetWorkerFlag {
		return runFleetWorker(ctx, getenv(fleetEnv), os.Stdin, stdout, stderr)
	}
	fs := flag.NewFlagSet("riverbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.StringVar(&cfg.databaseURL, "database-url", getenv("DATABASE_URL"), "PostgreSQL server (the user needs CREATEDB) [DATABASE_URL]")
	list := fs.String("scenario", "all", "comma-separated scenarios ("+strings.Join(scenarioNames, ", ")+"), or all")
	fs.IntVar(&cfg.jobs, "jobs", 100_000, "jobs drain works")
	fs.Int("tenants", 0, "ignored: River has no tenants (accepted for docket bench's command line)")
	fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "how long steady counts completions")
	fs.DurationVar(&cfg.warmup, "warmup", 5*time.Second, "how long steady works before it starts counting (0: not at all)")
	fs.IntVar(&cfg.workers, "workers", 0, "MaxWorkers (default 2000 tuned, 100 with --defaults)")
	fs.IntVar(&cfg.samples, "samples", 1000, "jobs latency times")
	fs.BoolVar(&cfg.defaults, "defaults", false, "River's default fetch settings instead of its benchmark's")
	fleet := fs.String("fleet", "1,2,4,8", "worker process counts fleet runs with, comma-separated")
	fs.StringVar(&cfg.fleetCPUProfile, "fleet-cpuprofile", "", "directory each fleet worker process writes a CPU profile to")
	asJSON := fs.Bool("json", false, "print one JSON object per line per scenario")
	verbose := fs.Bool("v", false, "print progress and River's warnings to stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	names, err := parseNames(*list)
	if err != nil {
		return err
	}
	if cfg.databaseURL == "" {
		return errors.New("--database-url is required")
	}
	if cfg.fleet, err = parseFleet(*fleet); err != nil {
		return err
	}
	cfg.tune()
	cfg.logger, cfg.progress = slog.New(slog.DiscardHandler), io.Discard
	if *verbose {
		cfg.logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		cfg.progress = stderr
	}
	for _, name := range names {
		res, err := runScenario(ctx, &cfg, name)
		if err != nil {
			return fmt.Errorf("scenario %s: %w", name, err)
		}
		if *asJSON {
			err = res.writeJSON(stdout)
		} else {
			err = res.writeTable(stdout)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// tune applies River's benchmark settings, or its defaults.
func (c *config) tune() {
	if c.defaults {
		c.fetchCooldown, c.pollInterval = 100*time.Millisecond, time.Second
		if c.workers <= 0 {
			c.workers = 100
		}
		return
	}
	c.fetchCooldown, c.pollInterval = 2*time.Millisecond, 20*time.Millisecond
	if c.workers <= 0 {
		c.workers = 2000
	}
}

func parseNames(list string) ([]string, error) {
	if list == "all" {
		return scenarioNames, nil
	}
	var names []string
	for n := range strings.SplitSeq(list, ",") {
		n = strings.TrimSpace(n)
		if !slices.Contains(scenarioNames, n) && !slices.Contains(namedOnly, n) {
			return nil, fmt.Errorf("unknown scenario %q (want %s or all)", n, strings.Join(append(slices.Clone(scenarioNames), namedOnly...), ", "))
		}
		names = append(names, n)
	}
	return names, nil
}

func runScenario(ctx context.Context, cfg *config, name string) (res *result, err error) {
	db, err := openDatabase(ctx, cfg.databaseURL)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, db.close()) }()
	fmt.Fprintf(cfg.progress, "riverbench %s: start on postgres %s\n", name, db.version)
	mark, err := markPG(ctx, db.pool)
	if err != nil {
		return nil, err
	}
	switch name {
	case "drain":
		res, err = runDrain(ctx, cfg, db)
	case "steady":
		res, err = runSteady(ctx, cfg, db)
	case "fleet":
		res, err = runFleet(ctx, cfg)
	default:
		res, err = runLatency(ctx, cfg, db)
	}
	if err != nil {
		return nil, err
	}
	if name == "drain" || name == "steady" {
		if err := addWAL(ctx, db, mark, res); err != nil {
			return nil, err
		}
	}
	res.scenario = name
	common := &result{}
	common.set("store", "postgres "+db.version)
	common.set("system", "river v0.51.1")
	common.set("workers", strconv.Itoa(cfg.workers))
	common.set("poll_interval", cfg.pollInterval.String())
	common.set("fetch_cooldown", cfg.fetchCooldown.String())
	res.settings = append(common.settings, res.settings...)
	return res, nil
}

// addWAL adds wal_bytes_per_job and xacts_per_1k_jobs since mark: per job
// drained (drain's "jobs") or completed (steady's "completed"), the load's
// inserts included, as docket bench measures them.
func addWAL(ctx context.Context, db *database, mark pgMark, res *result) error {
	if err := flushStats(ctx, db.pool); err != nil {
		return err
	}
	wal, xacts, err := sincePG(ctx, db.pool, mark)
	if err != nil {
		return err
	}
	var jobs float64
	for _, f := range res.figures {
		switch v := f.value.(type) {
		case int:
			if f.key == "jobs" {
				jobs = float64(v)
			}
		case int64:
			if f.key == "completed" {
				jobs = float64(v)
			}
		}
	}
	if jobs <= 0 {
		return nil
	}
	res.add("wal_bytes_per_job", wal/jobs)
	res.add("xacts_per_1k_jobs", 1000*float64(xacts)/jobs)
	return nil
}
