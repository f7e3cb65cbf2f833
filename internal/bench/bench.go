// Package bench measures the queue engine end to end: the scenarios behind
// `docket bench` (drain, steady, latency, fairness, scale, fleet).
//
// Each scenario runs on a fresh, migrated, empty store that a [Store] hands
// out (a new PostgreSQL database, or a new SQLite file in a temporary
// directory) and removes afterwards, and returns a [Result]: named figures
// (jobs_per_sec, p50_ms, ...) and the settings it ran with. The fleet
// scenario (K worker processes on one PostgreSQL server) runs only when
// named: it needs PostgreSQL and a command that starts a worker process
// (Config.FleetWorker). Worker settings
// are tuned for throughput (see [Config]); they are reported with every
// result so that figures are never quoted without them.
//
//	store := bench.NewPostgresStore(url)
//	err := bench.Run(ctx, bench.Config{}, store, []string{"drain"}, func(r *bench.Result) error {
//		return r.WriteJSON(os.Stdout)
//	})
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Config sizes the scenarios and tunes the workers. Zero fields take the
// defaults named.
type Config struct {
	// Jobs is the number of jobs: drained by drain (default 100,000),
	// flooded by tenant A in fairness (default 50,000) and pending in the
	// large case of scale (default 1,000,000).
	Jobs int
	// Tenants the jobs of drain and steady are spread over. Default 100.
	Tenants int
	// Duration of steady's measurement. Default 10s.
	Duration time.Duration
	// Warmup is how long steady works before it starts counting (zero:
	// not at all): the rate is that of the system under way, not of its
	// start. docket bench and bench/river both default to 5s.
	Warmup time.Duration
	// Workers is the number of jobs one worker runs at once (MaxWorkers)
	// in drain, steady and latency. Default 1,000.
	Workers int
	// Samples is the number of jobs latency times. Default 1,000.
	Samples int
	// Backlog is the number of pending jobs steady keeps topped up.
	// Default 20,000.
	Backlog int

	// PollInterval and FetchCooldown tune the workers. Defaults 20ms and
	// 2ms, as River's benchmark tunes River.
	PollInterval  time.Duration
	FetchCooldown time.Duration
	// Claimers and Completers set queue.QueueConfig.Claimers and
	// queue.WorkerConfig.Completers of every worker. Default 0 each: the
	// engine's default (a quarter of GOMAXPROCS, 1 to 4).
	Claimers   int
	Completers int

	// ScaleTenants is the tenant counts scale runs with, each on a fresh
	// store. Default 10 and 10,000.
	ScaleTenants []int

	// Fleet is the numbers of worker processes the fleet scenario runs
	// with, one after the other. Default 1, 2, 4, 8.
	Fleet []int
	// FleetWorker is the command (program and arguments) that starts one
	// fleet worker process; the process must call RunFleetWorker with the
	// value of the environment variable FleetEnv. Needed by fleet only.
	FleetWorker []string
	// FleetCPUProfile, when set, is a directory each fleet worker process
	// writes a CPU profile of its working time to.
	FleetCPUProfile string

	// Logger receives the engine's warnings. Default: discard.
	Logger *slog.Logger
	// Progress, when set, receives a line per phase of a scenario.
	Progress io.Writer
}

func (c *Config) setDefaults() {
	setInt(&c.Tenants, 100)
	setInt(&c.Workers, 1000)
	setInt(&c.Samples, 1000)
	setInt(&c.Backlog, 20_000)
	if c.Duration <= 0 {
		c.Duration = 10 * time.Second
	}
	if c.PollInterval <= 0 {
		c.PollInterval = 20 * time.Millisecond
	}
	if c.FetchCooldown <= 0 {
		c.FetchCooldown = 2 * time.Millisecond
	}
	if len(c.Fleet) == 0 {
		c.Fleet = []int{1, 2, 4, 8}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

func setInt(v *int, def int) {
	if *v <= 0 {
		*v = def
	}
}

// jobsOr returns Config.Jobs, or def when it is unset.
func (c *Config) jobsOr(def int) int {
	if c.Jobs > 0 {
		return c.Jobs
	}
	return def
}

// scenario is one named measurement.
type scenario struct {
	name string
	run  func(ctx context.Context, r *runner) (*Result, error)
	// named: not part of "all"; runs only when named.
	named bool
}

var scenarios = []scenario{
	{"drain", runDrain, false},
	{"steady", runSteady, false},
	{"latency", runLatency, false},
	{"fairness", runFairness, false},
	{"scale", runScale, false},
	{"fleet", runFleet, true},
}

// Names returns the scenario names in the order "all" runs them.
func Names() []string {
	var names []string
	for _, s := range scenarios {
		if !s.named {
			names = append(names, s.name)
		}
	}
	return names
}

// NamedOnly returns the scenarios that "all" leaves out: they run only
// when named.
func NamedOnly() []string {
	var names []string
	for _, s := range scenarios {
		if s.named {
			names = append(names, s.name)
		}
	}
	return names
}

// ParseNames turns a comma-separated list of scenario names, or "all", into
// names, checking each.
func ParseNames(list string) ([]string, error) {
	if list == "all" {
		return Names(), nil
	}
	var names []string
	for n := range strings.SplitSeq(list, ",") {
		n = strings.TrimSpace(n)
		if !slices.ContainsFunc(scenarios, func(s scenario) bool { return s.name == n }) {
			return nil, fmt.Errorf("unknown scenario %q (want %s or all)", n, strings.Join(append(Names(), NamedOnly()...), ", "))
		}
		names = append(names, n)
	}
	return names, nil
}

// Run runs the named scenarios one after the other, each on a fresh store,
// and hands each result to emit as soon as it is known.
func Run(ctx context.Context, cfg Config, store Store, names []string, emit func(*Result) error) error {
	cfg.setDefaults()
	for _, name := range names {
		i := slices.IndexFunc(scenarios, func(s scenario) bool { return s.name == name })
		if i < 0 {
			return fmt.Errorf("unknown scenario %q", name)
		}
		res, err := runOne(ctx, &cfg, store, scenarios[i])
		if err != nil {
			return fmt.Errorf("scenario %s: %w", name, err)
		}
		if err := emit(res); err != nil {
			return err
		}
	}
	return nil
}

func runOne(ctx context.Context, cfg *Config, store Store, s scenario) (res *Result, err error) {
	env, err := store.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, env.Close()) }()
	r := &runner{cfg: cfg, env: env, store: store, name: s.name}
	r.progressf("start on %s", env.Describe)
	// drain and steady also report the WAL and the transactions per job
	// of the whole scenario, its load included, on PostgreSQL.
	pool := pgPool(env.Driver)
	measure := pool != nil && (s.name == "drain" || s.name == "steady")
	var mark pgMark
	if measure {
		if mark, err = markPG(ctx, pool); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	res, err = s.run(ctx, r)
	if err != nil {
		return nil, err
	}
	res.Scenario = s.name
	if measure {
		if err := addWAL(ctx, pool, mark, res); err != nil {
			return nil, err
		}
	}
	r.progressf("done in %s", time.Since(start).Round(time.Millisecond))
	return res, nil
}

// runner is what a scenario works with: the configuration and its store.
type runner struct {
	cfg   *Config
	env   *Env
	store Store // for scenarios that need more than one fresh store
	name  string
}

func (r *runner) progressf(format string, args ...any) {
	fmt.Fprintf(r.cfg.Progress, "bench %s: %s\n", r.name, fmt.Sprintf(format, args...))
}

// addWAL adds wal_bytes_per_job and xacts_per_1k_jobs since mark to a drain or
// steady result: per job drained (drain's "jobs") or completed (steady's
// "completed"), the load's inserts included.
func addWAL(ctx context.Context, pool *pgxpool.Pool, mark pgMark, res *Result) error {
	if err := flushStats(ctx, pool); err != nil {
		return err
	}
	wal, xacts, err := sincePG(ctx, pool, mark)
	if err != nil {
		return err
	}
	var jobs float64
	if v, ok := res.Get("jobs").(int); ok {
		jobs = float64(v)
	}
	if v, ok := res.Get("completed").(int64); ok {
		jobs = float64(v)
	}
	if jobs <= 0 {
		return nil
	}
	res.add("wal_bytes_per_job", wal/jobs)
	res.add("xacts_per_1k_jobs", 1000*float64(xacts)/jobs)
	return nil
}
