// Package bench measures the queue engine end to end: the scenarios behind
// `docket bench` (drain, steady, latency, fairness, scale).
//
// Each scenario runs on a fresh, migrated, empty store that a [Store] hands
// out (a new PostgreSQL database, or a new SQLite file in a temporary
// directory) and removes afterwards, and returns a [Result]: named figures
// (jobs_per_sec, p50_ms, ...) and the settings it ran with. Worker settings
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
	// Duration of steady. Default 10s.
	Duration time.Duration
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
}

var scenarios = []scenario{
	{"drain", runDrain},
	{"steady", runSteady},
	{"latency", runLatency},
	{"fairness", runFairness},
	{"scale", runScale},
}

// Names returns the scenario names in the order "all" runs them.
func Names() []string {
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.name
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
		if !slices.Contains(Names(), n) {
			return nil, fmt.Errorf("unknown scenario %q (want %s or all)", n, strings.Join(Names(), ", "))
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
	start := time.Now()
	res, err = s.run(ctx, r)
	if err != nil {
		return nil, err
	}
	res.Scenario = s.name
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
