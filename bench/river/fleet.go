package main

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
)

// The fleet scenario, as docket bench runs it (internal/bench/fleet.go):
// for each K of --fleet, K worker processes (this program re-executed with
// --fleet-worker, each with its own pool and River client) work one
// database together, first draining --jobs jobs, then for --duration
// against a backlog of 20,000 that four producers in this process keep
// topped up. Each phase runs on a fresh database and reports jobs/s, WAL
// bytes and transactions per job, the worker processes' CPU per job and how
// busy the machine was. The processes talk over stdin/stdout: "ready",
// "n COUNT LAST", "done COUNT LAST" from the worker; "start", "stop" to it.

// fleetEnv carries a worker process's settings.
const fleetEnv = "RIVERBENCH_FLEET_WORKER"

const (
	fleetWorkerFlag   = "--fleet-worker"
	fleetReadyTimeout = 30 * time.Second
	fleetStopTimeout  = 30 * time.Second
)

type fleetSpec struct {
	ConnString    string        `json:"conn"`
	Workers       int           `json:"workers"`
	PollInterval  time.Duration `json:"poll"`
	FetchCooldown time.Duration `json:"cooldown"`
	Verbose       bool          `json:"verbose,omitempty"`
	CPUProfile    string        `json:"cpuprofile,omitempty"`
}

// runFleetWorker is the body of a worker process.
func runFleetWorker(ctx context.Context, spec string, stdin io.Reader, stdout, stderr io.Writer) error {
	var s fleetSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		return fmt.Errorf("fleet worker: %s: %w", fleetEnv, err)
	}
	cfg := &config{workers: s.Workers, pollInterval: s.PollInterval, fetchCooldown: s.FetchCooldown, logger: slog.New(slog.DiscardHandler)}
	if s.Verbose {
		cfg.logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	pool, err := pgxpool.New(ctx, s.ConnString)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := pool.Ping(ctx); err != nil {
		return err
	}
	b, err := newBench(cfg, pool, nil)
	if err != nil {
		return err
	}
	out := &lineWriter{w: stdout}
	if err := out.printf("ready"); err != nil {
		return err
	}
	in := bufio.NewScanner(stdin)
	if !in.Scan() || in.Text() != "start" {
		return nil
	}
	stopped := make(chan struct{})
	go func() {
		for in.Scan() && in.Text() != "stop" {
		}
		close(stopped)
	}()
	if s.CPUProfile != "" {
		f, err := os.Create(s.CPUProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
	}
	stop, err := b.start(ctx)
	if err != nil {
		return err
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	reported := int64(0)
	report := func(word string) error {
		n := b.done.Load()
		reported = n
		return out.printf("%s %d %d", word, n, b.last.Load())
	}
	for waiting := true; waiting; {
		select {
		case <-tick.C:
			if b.done.Load() != reported {
				if err := report("n"); err != nil {
					return errors.Join(err, stop())
				}
			}
		case <-stopped:
			waiting = false
		case <-ctx.Done():
			waiting = false
		}
	}
	err = stop() // waits for the completer to store every completion
	err = errors.Join(err, flushStats(ctx, pool))
	return errors.Join(err, report("done"))
}

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

// runFleet runs every K of cfg.fleet, a drain and a steady phase each.
func runFleet(ctx context.Context, cfg *config) (*result, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	res := &result{}
	for _, k := range cfg.fleet {
		for _, phase := range []string{"drain", "steady"} {
			if err := fleetPhase(ctx, cfg, exe, k, phase, res); err != nil {
				return nil, fmt.Errorf("fleet of %d, %s: %w", k, phase, err)
			}
		}
	}
	ks := make([]string, len(cfg.fleet))
	for i, k := range cfg.fleet {
		ks[i] = strconv.Itoa(k)
	}
	res.set("fleet", strings.Join(ks, ","))
	res.set("jobs", cfg.jobs)
	res.set("backlog_target", steadyBacklog)
	res.set("warmup", cfg.warmup.String())
	res.set("producers", steadyProducers)
	res.set("steady_seconds", cfg.duration.Seconds())
	return res, nil
}

func fleetPhase(ctx context.Context, cfg *config, exe string, k int, phase string, res *result) (err error) {
	db, err := openDatabase(ctx, cfg.databaseURL)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, db.close()) }()
	b, err := newBench(cfg, db.pool, nil) // inserts only; never started
	if err != nil {
		return err
	}
	defer b.stop()
	n := cfg.jobs
	if phase == "steady" {
		n = steadyBacklog
	}
	fmt.Fprintf(cfg.progress, "riverbench fleet: K=%d %s: inserting %d jobs\n", k, phase, n)
	for from := 0; from < n; from += insertBatch {
		if err := insertMany(ctx, b.client, from, min(from+insertBatch, n)); err != nil {
			return err
		}
	}
	_, _ = db.pool.Exec(ctx, "CHECKPOINT") // best effort, as docket bench
	spec := fleetSpec{
		ConnString: db.connString, Workers: cfg.workers,
		PollInterval: cfg.pollInterval, FetchCooldown: cfg.fetchCooldown,
		Verbose: cfg.progress != io.Discard,
	}
	profile := func(i int) string {
		if cfg.fleetCPUProfile == "" {
			return ""
		}
		return filepath.Join(cfg.fleetCPUProfile, fmt.Sprintf("river-fleet-k%d-%s-w%d.pprof", k, phase, i))
	}
	f, err := startFleet(ctx, []string{exe, fleetWorkerFlag}, spec, profile, k, b, cfg.progress)
	if err != nil {
		return err
	}
	defer f.kill()
	if err := flushStats(ctx, db.pool); err != nil {
		return err
	}
	mark, err := markPG(ctx, db.pool)
	if err != nil {
		return err
	}
	cpu0 := machineCPU()
	if err := f.start(); err != nil {
		return err
	}
	start := time.Now()
	var jobsPerSec float64
	if phase == "drain" {
		if err := waitFor(ctx, b.done.Load, int64(n)); err != nil {
			return errors.Join(err, f.stop())
		}
		jobsPerSec = float64(n) / time.Unix(0, b.last.Load()).Sub(start).Seconds()
	} else {
		var inserted, insertErrors atomic.Int64
		inserted.Store(int64(n))
		pctx, stopProducers := context.WithCancel(ctx)
		var wg sync.WaitGroup
		errs := make([]error, steadyProducers)
		for p := range steadyProducers {
			wg.Go(func() { errs[p] = b.produce(pctx, &inserted, &insertErrors) })
		}
		if cfg.warmup > 0 { // as runSteady: count the fleet under way, not its start
			sleep(ctx, cfg.warmup)
		}
		counted, from := b.done.Load(), time.Now()
		sleep(ctx, cfg.duration)
		completed := b.done.Load() - counted
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
	if err := flushStats(ctx, db.pool); err != nil {
		return err
	}
	wal, xacts, err := sincePG(ctx, db.pool, mark)
	if err != nil {
		return err
	}
	jobs := float64(b.done.Load())
	prefix := fmt.Sprintf("k%d_%s_", k, phase)
	res.add(prefix+"jobs_per_sec", jobsPerSec)
	res.add(prefix+"wal_bytes_per_job", wal/jobs)
	res.add(prefix+"xacts_per_1k_jobs", 1000*float64(xacts)/jobs)
	res.add(prefix+"worker_cpu_us_per_job", float64(f.cpu().Microseconds())/jobs)
	res.add(prefix+"machine_cpu_busy", cpu1.busySince(cpu0))
	return nil
}

type fleet struct{ procs []*fleetProc }

type fleetProc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stderr  *tailBuffer
	ready   chan struct{}
	exited  chan struct{}
	waitErr error
	done    atomic.Bool
}

// startFleet starts k worker processes, their completions counted into b,
// and waits until each is ready.
func startFleet(ctx context.Context, argv []string, spec fleetSpec, profile func(int) string, k int, b *bench, progress io.Writer) (*fleet, error) {
	f := &fleet{}
	var last sync.Mutex
	for i := range k {
		s := spec
		s.CPUProfile = profile(i)
		js, err := json.Marshal(s)
		if err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...) // killed if the scenario is abandoned
		cmd.Env = append(os.Environ(), fleetEnv+"="+string(js))
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
		go p.read(stdout, b, &last)
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

func (p *fleetProc) read(stdout io.Reader, b *bench, last *sync.Mutex) {
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
			b.done.Add(n - count)
			count = n
			last.Lock()
			if at > b.last.Load() {
				b.last.Store(at)
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

func (f *fleet) start() error {
	for i, p := range f.procs {
		if _, err := io.WriteString(p.stdin, "start\n"); err != nil {
			return fmt.Errorf("worker process %d: %w", i, err)
		}
	}
	return nil
}

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

func (f *fleet) cpu() time.Duration {
	var d time.Duration
	for _, p := range f.procs {
		if st := p.cmd.ProcessState; st != nil {
			d += st.UserTime() + st.SystemTime()
		}
	}
	return d
}

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

// flushStats makes every idle connection of pool push its pending
// statistics now (PostgreSQL 15 and later).
func flushStats(ctx context.Context, pool *pgxpool.Pool) error {
	var errs []error
	for _, c := range pool.AcquireAllIdle(ctx) {
		if _, err := c.Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil && !strings.Contains(err.Error(), "SQLSTATE 42883") {
			errs = append(errs, err)
		}
		c.Release()
	}
	return errors.Join(errs...)
}

type pgMark struct {
	lsn   string
	xacts int64
}

const xactsQuery = `SELECT COALESCE((SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()), 0)`

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

func sincePG(ctx context.Context, pool *pgxpool.Pool, m pgMark) (wal float64, xacts int64, err error) {
	err = pool.AcquireFunc(ctx, func(c *pgxpool.Conn) error {
		if _, err := c.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
			return err
		}
		return c.QueryRow(ctx, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::text::pg_lsn)::float8, ("+xactsQuery+")", m.lsn).Scan(&wal, &xacts)
	})
	return wal, xacts - m.xacts, err
}

type cpuTimes struct{ busy, total int64 }

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
		if i >= 8 {
			break
		}
		v, _ := strconv.ParseInt(f, 10, 64)
		c.total += v
		if i != 3 && i != 4 {
			c.busy += v
		}
	}
	return c
}

func (c cpuTimes) busySince(c0 cpuTimes) float64 {
	if c.total <= c0.total {
		return math.NaN()
	}
	return float64(c.busy-c0.busy) / float64(c.total-c0.total)
}

func parseFleet(list string) ([]int, error) {
	var ks []int
	for f := range strings.SplitSeq(list, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 || k > 64 {
			return nil, fmt.Errorf("fleet: %q is not a process count (1-64)", f)
		}
		ks = append(ks, k)
	}
	return ks, nil
}
