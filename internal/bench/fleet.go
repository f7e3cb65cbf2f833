package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
)

// The fleet scenario: K worker processes, each its own OS process with its
// own connection pool, work one PostgreSQL database together. For each K of
// Config.Fleet it runs two phases, each on a fresh database:
//
//   - drain: Jobs jobs (default 100,000) are inserted and the database
//     checkpointed, then the K processes are started, and once all are
//     connected and ready they are told to go at once; jobs/s = jobs /
//     (last completion - go).
//   - steady: Backlog jobs are pre-filled, then the K processes work while
//     four producers in this process keep the backlog topped up, for
//     Warmup and then Duration; jobs/s = completions in Duration / Duration.
//
// Each phase also reports the WAL it wrote per job (pg_current_wal_lsn
// before and after, pg_wal_lsn_diff), the transactions per job (xact_commit
// + xact_rollback of the database in pg_stat_database; every pool's pending
// statistics are flushed first), the CPU time of the worker processes per
// job and how busy the machine's cores were.
//
// A worker process is Config.FleetWorker (docket bench re-executes itself
// with a hidden flag) with its settings as JSON in the environment variable
// FleetEnv; it must call RunFleetWorker. It talks to the scenario over its
// stdin and stdout, one line per message:
//
//	worker -> scenario: "ready" once connected; "n COUNT LAST" as
//	                    completions are stored (COUNT in all, LAST the unix
//	                    nanoseconds of the latest); "done COUNT LAST" after
//	                    it stopped and flushed its statistics
//	scenario -> worker: "start"; "stop" (or stdin closed: stop)
//
// The scenario kills (by PID) any worker process still running when it
// returns.

// FleetEnv is the environment variable that carries a fleet worker
// process's settings.
const FleetEnv = "DOCKET_BENCH_FLEET_WORKER"

// fleetReadyTimeout is how long a worker process may take to connect.
const fleetReadyTimeout = 30 * time.Second

// fleetStopTimeout is how long a worker process may take to stop before it
// is killed.
const fleetStopTimeout = 30 * time.Second

// fleetSpec is what a worker process is told.
type fleetSpec struct {
	ConnString    string        `json:"conn"`
	Slots         int           `json:"slots"`
	PollInterval  time.Duration `json:"poll"`
	FetchCooldown time.Duration `json:"cooldown"`
	Claimers      int           `json:"claimers"`
	Completers    int           `json:"completers"`
	Verbose       bool          `json:"verbose,omitempty"`
	CPUProfile    string        `json:"cpuprofile,omitempty"`
}

// RunFleetWorker is the body of a fleet worker process: spec is the value
// of FleetEnv. It connects, says "ready", works from "start" to "stop" (or
// the end of stdin) and reports its completions on stdout.
func RunFleetWorker(ctx context.Context, spec string, stdin io.Reader, stdout, stderr io.Writer) (err error) {
	var s fleetSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		return fmt.Errorf("fleet worker: %s: %w", FleetEnv, err)
	}
	logger := slog.New(slog.DiscardHandler)
	if s.Verbose {
		logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	d, err := postgres.Open(ctx, s.ConnString)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, d.Close()) }()
	client := queue.NewClient(d, queue.ClientConfig{Logger: logger})
	var done tally
	r := &runner{cfg: &Config{PollInterval: s.PollInterval, FetchCooldown: s.FetchCooldown,
		Claimers: s.Claimers, Completers: s.Completers, Logger: logger}}
	w, err := queue.NewWorker(client, r.workerConfig(s.Slots, noop, queue.Hooks{Finished: done.hook}))
	if err != nil {
		return err
	}
	out := &lineWriter{w: stdout}
	if err := out.printf("ready"); err != nil {
		return err
	}
	in := bufio.NewScanner(stdin)
	if !in.Scan() || in.Text() != "start" {
		return nil // told to stop before it started
	}
	stopped := make(chan struct{})
	go func() {
		for in.Scan() && in.Text() != "stop" {
		}
		close(stopped)
	}()
	if s.CPUProfile != "" {
		stop, err := startProfile(s.CPUProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- w.Run(wctx) }()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	reported := int64(0)
	report := func(word string) error {
		n := done.n.Load()
		reported = n
		return out.printf("%s %d %d", word, n, done.last.Load())
	}
	for {
		select {
		case <-tick.C:
			if done.n.Load() != reported {
				if err := report("n"); err != nil {
					cancel()
					return errors.Join(err, <-ran)
				}
			}
			continue
		case <-stopped:
			cancel()
			err = <-ran
		case err = <-ran:
			cancel()
			if err == nil {
				err = errors.New("worker stopped before it was told to")
			}
		}
		break
	}
	// Nothing runs now: push this process's pending statistics to the
	// server, so that the scenario's pg_stat_database reading counts them.
	err = errors.Join(err, flushStats(ctx, d.Pool()))
	return errors.Join(err, report("done"))
}

func startProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}

// lineWriter writes whole lines from several goroutines.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) printf(format string, args ...any) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := fmt.Fprintf(l.w, format+"\n", args...)
	return err
}

// runFleet runs the fleet scenario.
func runFleet(ctx context.Context, r *runner) (*Result, error) {
	ps, ok := r.store.(*PostgresStore)
	if !ok {
		return nil, errors.New("fleet needs PostgreSQL (--database-url): its worker processes share one server")
	}
	if len(r.cfg.FleetWorker) == 0 {
		return nil, errors.New("fleet needs Config.FleetWorker, the command that starts a worker process")
	}
	res := &Result{}
	for _, k := range r.cfg.Fleet {
		for _, phase := range []string{"drain", "steady"} {
			if err := r.fleetPhase(ctx, ps, k, phase, res); err != nil {
				return nil, fmt.Errorf("fleet of %d, %s: %w", k, phase, err)
			}
		}
	}
	r.settings(res, strconv.Itoa(r.cfg.Workers)+" per process")
	res.set("fleet", joinInts(r.cfg.Fleet))
	res.set("jobs", r.cfg.jobsOr(100_000))
	res.set("tenants", r.cfg.Tenants)
	res.set("backlog_target", r.cfg.Backlog)
	res.set("producers", steadyProducers)
	res.set("steady_seconds", r.cfg.Duration.Seconds())
	res.set("warmup", r.cfg.Warmup.String())
	return res, nil
}

// fleetPhase runs one phase with k processes on a fresh database and adds
// its figures, named k<K>_<phase>_..., to res.
func (r *runner) fleetPhase(ctx context.Context, ps *PostgresStore, k int, phase string, res *Result) (err error) {
	env, err := r.store.Open(ctx)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, env.Close()) }()
	pool := pgPool(env.Driver)
	var dbname string
	if err := pool.QueryRow(ctx, "SELECT current_database()").Scan(&dbname); err != nil {
		return err
	}
	connString, err := withDatabase(ps.connString, dbname)
	if err != nil {
		return err
	}
	maxK := 1
	for _, k := range r.cfg.Fleet {
		maxK = max(maxK, k)
	}
	// The limit never binds: no tenant can run more than all the slots.
	client := queue.NewClient(env.Driver, queue.ClientConfig{Logger: r.cfg.Logger})
	if err := client.SetQueueDefaultLimit(ctx, queue.DefaultQueue, r.cfg.Workers*maxK); err != nil {
		return fmt.Errorf("set tenant limit: %w", err)
	}
	n := r.cfg.jobsOr(100_000)
	if phase == "steady" {
		n = r.cfg.Backlog
	}
	r.progressf("K=%d %s: inserting %d jobs", k, phase, n)
	if _, err := enqueueSpread(ctx, client, n, r.cfg.Tenants, 0); err != nil {
		return err
	}
	// Start measuring from rest: no pending statistics, a fresh
	// checkpoint (so every phase pays the same full-page writes).
	_, _ = pool.Exec(ctx, "CHECKPOINT") // best effort: needs pg_checkpoint or superuser
	var done tally
	spec := fleetSpec{
		ConnString: connString, Slots: r.cfg.Workers, Claimers: r.cfg.Claimers, Completers: r.cfg.Completers,
		PollInterval: r.cfg.PollInterval, FetchCooldown: r.cfg.FetchCooldown,
		Verbose: r.cfg.Progress != io.Discard,
	}
	profile := func(i int) string {
		if r.cfg.FleetCPUProfile == "" {
			return ""
		}
		return filepath.Join(r.cfg.FleetCPUProfile, fmt.Sprintf("fleet-k%d-%s-w%d.pprof", k, phase, i))
	}
	r.progressf("K=%d %s: starting %d worker processes", k, phase, k)
	f, err := startFleet(ctx, r.cfg.FleetWorker, spec, profile, k, &done, r.cfg.Progress)
	if err != nil {
		return err
	}
	defer f.kill()
	if err := flushStats(ctx, pool); err != nil {
		return err
	}
	mark, err := markPG(ctx, pool)
	if err != nil {
		return err
	}
	cpu0 := machineCPU()
	if err := f.start(); err != nil {
		return err
	}
	start := time.Now()
	prefix := fmt.Sprintf("k%d_%s_", k, phase)
	var jobsPerSec float64
	if phase == "drain" {
		r.progressf("K=%d drain: working", k)
		if err := r.waitFor(ctx, done.n.Load, int64(n)); err != nil {
			return errors.Join(err, f.stop())
		}
		jobsPerSec = float64(n) / time.Unix(0, done.last.Load()).Sub(start).Seconds()
	} else {
		var inserted, insertErrors atomic.Int64
		inserted.Store(int64(n))
		pctx, stopProducers := context.WithCancel(ctx)
		var wg sync.WaitGroup
		errs := make([]error, steadyProducers)
		prod := &producer{client: client, tenants: r.cfg.Tenants, backlog: int64(n), inserted: &inserted, done: &done, errors: &insertErrors}
		for i := range steadyProducers {
			wg.Go(func() { errs[i] = prod.run(pctx) })
		}
		r.warmUp(ctx, fmt.Sprintf("K=%d steady: ", k), done.n.Load) // as runSteady
		counted, from := done.n.Load(), time.Now()
		r.progressf("K=%d steady: inserting and working for %s", k, r.cfg.Duration)
		wctx, stopWait := context.WithTimeout(ctx, r.cfg.Duration)
		_ = r.waitFor(wctx, done.n.Load, math.MaxInt64) // reports the rate every second
		stopWait()
		completed := done.n.Load() - counted
		secs := time.Since(from).Seconds()
		stopProducers()
		wg.Wait()
		if err := errors.Join(ctx.Err(), errors.Join(errs...)); err != nil {
			return errors.Join(err, f.stop())
		}
		jobsPerSec = float64(completed) / secs
	}
	if err := f.stop(); err != nil {
		return err
	}
	cpu1 := machineCPU()
	if err := flushStats(ctx, pool); err != nil {
		return err
	}
	wal, xacts, err := sincePG(ctx, pool, mark)
	if err != nil {
		return err
	}
	// Per job worked: completions stored up to the workers' stop
	// (steady's WAL and transactions include the producers' inserts).
	jobs := float64(done.n.Load())
	res.add(prefix+"jobs_per_sec", jobsPerSec)
	res.add(prefix+"wal_bytes_per_job", wal/jobs)
	res.add(prefix+"xacts_per_1k_jobs", 1000*float64(xacts)/jobs)
	res.add(prefix+"worker_cpu_us_per_job", float64(f.cpu().Microseconds())/jobs)
	res.add(prefix+"machine_cpu_busy", cpu1.busySince(cpu0))
	return nil
}

// fleet is the worker processes of one phase.
type fleet struct {
	procs []*fleetProc
}

// fleetProc is one worker process.
type fleetProc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stderr  *tailBuffer
	ready   chan struct{} // closed at its "ready"
	exited  chan struct{} // closed once it exited and was waited for
	waitErr error         // set before exited is closed
	done    atomic.Bool   // it said "done"
}

// startFleet starts k worker processes and waits until each is ready.
func startFleet(ctx context.Context, argv []string, spec fleetSpec, profile func(int) string, k int, t *tally, progress io.Writer) (*fleet, error) {
	f := &fleet{}
	var last sync.Mutex // serialises updates of t.last
	for i := range k {
		s := spec
		s.CPUProfile = profile(i)
		js, err := json.Marshal(s)
		if err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...) // killed if the scenario is abandoned
		cmd.Env = append(os.Environ(), FleetEnv+"="+string(js))
		p := &fleetProc{cmd: cmd, stderr: &tailBuffer{}, ready: make(chan struct{}), exited: make(chan struct{})}
		cmd.Stderr = io.MultiWriter(p.stderr, progress)
		if p.stdin, err = cmd.StdinPipe(); err != nil {
			f.kill()
			return nil, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			f.kill()
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			f.kill()
			return nil, fmt.Errorf("start worker process: %w", err)
		}
		f.procs = append(f.procs, p)
		go p.read(stdout, t, &last)
	}
	timeout := time.NewTimer(fleetReadyTimeout)
	defer timeout.Stop()
	for i, p := range f.procs {
		select {
		case <-p.ready:
		case <-p.exited:
			f.kill()
			return nil, fmt.Errorf("worker process %d exited before it was ready: %w: %s", i, p.waitErr, p.stderr)
		case <-timeout.C:
			f.kill()
			return nil, fmt.Errorf("worker process %d not ready after %s: %s", i, fleetReadyTimeout, p.stderr)
		case <-ctx.Done():
			f.kill()
			return nil, ctx.Err()
		}
	}
	return f, nil
}

// read follows the process's reports until its stdout ends, then waits for
// it.
func (p *fleetProc) read(stdout io.Reader, t *tally, last *sync.Mutex) {
	sc := bufio.NewScanner(stdout)
	var count int64
	for sc.Scan() {
		word, rest, _ := strings.Cut(sc.Text(), " ")
		switch word {
		case "ready":
			close(p.ready)
		case "n", "done":
			var n, at int64
			if _, err := fmt.Sscan(rest, &n, &at); err != nil {
				continue
			}
			t.n.Add(n - count)
			count = n
			last.Lock()
			if at > t.last.Load() {
				t.last.Store(at)
			}
			last.Unlock()
			if word == "done" {
				p.done.Store(true)
			}
		}
	}
	_, _ = io.Copy(io.Discard, stdout)
	p.waitErr = p.cmd.Wait()
	close(p.exited)
}

// start tells every process to go.
func (f *fleet) start() error {
	for i, p := range f.procs {
		if _, err := io.WriteString(p.stdin, "start\n"); err != nil {
			return fmt.Errorf("worker process %d: %w", i, err)
		}
	}
	return nil
}

// stop tells every process to stop and waits for them to exit, killing
// those that take longer than fleetStopTimeout.
func (f *fleet) stop() error {
	for _, p := range f.procs {
		_, _ = io.WriteString(p.stdin, "stop\n")
		_ = p.stdin.Close()
	}
	timeout := time.NewTimer(fleetStopTimeout)
	defer timeout.Stop()
	var errs []error
	for i, p := range f.procs {
		select {
		case <-p.exited:
		case <-timeout.C:
			_ = p.cmd.Process.Kill()
			<-p.exited
			errs = append(errs, fmt.Errorf("worker process %d killed: not stopped after %s", i, fleetStopTimeout))
			continue
		}
		if p.waitErr != nil || !p.done.Load() {
			errs = append(errs, fmt.Errorf("worker process %d: %w: %s", i, p.waitErr, p.stderr))
		}
	}
	return errors.Join(errs...)
}

// kill kills every process still running and waits for it.
func (f *fleet) kill() {
	for _, p := range f.procs {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
}

// cpu is the CPU time (user and system) the processes used, for those that
// exited.
func (f *fleet) cpu() time.Duration {
	var d time.Duration
	for _, p := range f.procs {
		if st := p.cmd.ProcessState; st != nil {
			d += st.UserTime() + st.SystemTime()
		}
	}
	return d
}

// tailBuffer keeps the last 4 KiB written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.b))
}

// pgPool returns the pool of a PostgreSQL driver, or nil.
func pgPool(d driver.Driver) *pgxpool.Pool {
	if p, ok := d.(interface{ Pool() *pgxpool.Pool }); ok {
		return p.Pool()
	}
	return nil
}

// flushStats makes every idle connection of pool push its pending
// statistics to the server now (PostgreSQL 15 and later; a backend
// otherwise holds them for up to 10 s once idle).
func flushStats(ctx context.Context, pool *pgxpool.Pool) error {
	var errs []error
	for _, c := range pool.AcquireAllIdle(ctx) {
		if _, err := c.Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil && !isUndefinedFunction(err) {
			errs = append(errs, err)
		}
		c.Release()
	}
	return errors.Join(errs...)
}

func isUndefinedFunction(err error) bool {
	return strings.Contains(err.Error(), "SQLSTATE 42883")
}

// pgMark is where the WAL and the database's transaction count stood.
type pgMark struct {
	lsn   string
	xacts int64
}

const xactsQuery = `SELECT COALESCE((SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()), 0)`

// markPG reads the WAL position and the database's transaction count.
func markPG(ctx context.Context, pool *pgxpool.Pool) (pgMark, error) {
	var m pgMark
	err := pool.AcquireFunc(ctx, func(c *pgxpool.Conn) error {
		if _, err := c.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
			return err
		}
		return c.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text, ("+xactsQuery+")").Scan(&m.lsn, &m.xacts)
	})
	return m, err
}

// sincePG returns the WAL bytes written and the transactions of the
// database since m.
func sincePG(ctx context.Context, pool *pgxpool.Pool, m pgMark) (wal float64, xacts int64, err error) {
	err = pool.AcquireFunc(ctx, func(c *pgxpool.Conn) error {
		if _, err := c.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
			return err
		}
		return c.QueryRow(ctx, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::text::pg_lsn)::float8, ("+xactsQuery+")", m.lsn).Scan(&wal, &xacts)
	})
	return wal, xacts - m.xacts, err
}

// cpuTimes is the machine's CPU time from /proc/stat, in clock ticks.
type cpuTimes struct{ busy, total int64 }

// machineCPU reads /proc/stat; zero where there is none.
func machineCPU() cpuTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "cpu" {
		return cpuTimes{}
	}
	var c cpuTimes
	for i, f := range fields[1:] {
		v, _ := strconv.ParseInt(f, 10, 64)
		if i >= 8 { // guest time is counted in user already
			break
		}
		c.total += v
		if i != 3 && i != 4 { // idle, iowait
			c.busy += v
		}
	}
	return c
}

// busySince is the share of all cores busy between c0 and c, NaN when
// unknown.
func (c cpuTimes) busySince(c0 cpuTimes) float64 {
	if c.total <= c0.total {
		return math.NaN()
	}
	return float64(c.busy-c0.busy) / float64(c.total-c0.total)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// ParseFleet parses a comma-separated list of worker process counts.
func ParseFleet(list string) ([]int, error) {
	return parseCounts(list, "fleet: %q is not a process count (1-64)", 64)
}

// ParseScaleTenants parses a comma-separated list of tenant counts for
// Config.ScaleTenants.
func ParseScaleTenants(list string) ([]int, error) {
	return parseCounts(list, "scale: %q is not a tenant count (1-1000000)", 1_000_000)
}

// parseCounts parses a comma-separated list of counts from 1 to most; bad
// is the error's format for an element that is not one.
func parseCounts(list, bad string, most int) ([]int, error) {
	var ns []int
	for f := range strings.SplitSeq(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > most {
			return nil, fmt.Errorf(bad, f)
		}
		ns = append(ns, n)
	}
	return ns, nil
}
