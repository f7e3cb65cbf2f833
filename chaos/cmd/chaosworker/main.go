// Command chaosworker is the worker process of Docket's chaos tests: a
// queue.Worker on PostgreSQL whose handlers write the execution ledger that
// the tests check (see package chaos).
//
// It registers three job kinds:
//
//   - ledger: records (job_id, attempt, worker_pid, started_at) in
//     executions in its own autocommit statement, sleeps a random
//     -ledger-min..-ledger-max (or args.sleep_ms), then inserts
//     effects(job_id) and completes the job in one transaction
//     (Task.CompleteTx).
//   - exit: records the execution, then exits the process with status 3 (a
//     poison pill).
//   - sleep: records the execution, then sleeps args.sleep_ms (default
//     -sleep) honouring its context; the engine completes it.
//   - sink: records the execution, sleeps args.sleep_ms deaf to its
//     context, writes (job, attempt) to the fenced external sink at
//     -sink-url (which refuses attempts lower than one it has seen), then
//     completes as a ledger job does.
//
// With -periodic name=spec (repeatable) the worker defines a periodic job:
// each tick enqueues a job of kind periodic in queue periodic (which no
// chaosworker works) with args {"name": name, "tick": tick}.
//
// With -reserve name=slots (repeatable) the worker also works queue name
// with that many slots of its own, which jobs of the -queue never take.
//
// With -audit-maintenance every maintenance sweep is recorded in
// maintenance_runs (pid, task, jobs, time). The tables executions, effects
// and maintenance_runs must exist (the tests create them). The
// process prints "ready pid=<pid> id=<id>" on stdout once the worker runs,
// shuts down gracefully on SIGTERM or SIGINT (exit status 0 after a clean
// Run), and with -exit-on-stdin-eof exits with status 4 when its standard
// input closes, so that workers never outlive a killed test process. With
// -start-gate it prints "connected pid=<pid>" once its pool has its first
// connection and waits for a line on standard input before it starts the
// worker (the connection-budget test starts every worker into the budget at once this way:
// see chaos/budget_test.go).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/postgres"
)

func main() {
	// The time the process got the shutdown signal, on the host's clock
	// (the database's, on one host), for the tests that check no work
	// starts after it: a signal reaches a process scheduled late on a
	// loaded machine tens of milliseconds after it was sent.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
	go func() {
		s := <-sigs
		fmt.Fprintf(os.Stderr, "chaosworker: %s received at %s\n", s, time.Now().UTC().Format(time.RFC3339Nano))
	}()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaosworker:", err)
		os.Exit(1)
	}
}

// config is what the flags set.
type config struct {
	databaseURL    string
	id             string
	queue          string
	concurrency    int
	pool           int
	lease          time.Duration
	heartbeat      time.Duration
	poll           time.Duration
	grace          time.Duration
	stuck          time.Duration
	leaderTTL      time.Duration
	elect          time.Duration
	rescue         time.Duration
	schedule       time.Duration
	backoffMin     time.Duration
	backoffMax     time.Duration
	ledgerMin      time.Duration
	ledgerMax      time.Duration
	sleep          time.Duration
	sinkURL        string
	completeHold   time.Duration
	noMaintenance  bool
	audit          bool
	exitOnStdinEOF bool
	startGate      bool
	syncCommit     bool // refuse to start on synchronous_commit = off
	checkBudget    bool // warn when the Docket processes' pools exceed the connection budget
	clockOffset    time.Duration
	logLevel       string
	periodic       []queue.PeriodicJob
	reserved       map[string]int // more queues, each with its own slots
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("chaosworker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.databaseURL, "database-url", "", "PostgreSQL connection string (URL or key=value)")
	fs.StringVar(&c.id, "id", "", "worker id (default: chaos-<pid>)")
	fs.StringVar(&c.queue, "queue", queue.DefaultQueue, "queue to work")
	fs.IntVar(&c.concurrency, "concurrency", 8, "jobs run at once")
	fs.IntVar(&c.pool, "pool", 0, "connection pool size (default concurrency+4)")
	fs.DurationVar(&c.lease, "lease", 2*time.Second, "lease duration")
	fs.DurationVar(&c.heartbeat, "heartbeat", 0, "heartbeat interval (default lease/3)")
	fs.DurationVar(&c.poll, "poll", 200*time.Millisecond, "poll interval")
	fs.DurationVar(&c.grace, "grace", 5*time.Second, "shutdown grace period")
	fs.DurationVar(&c.stuck, "stuck", 0, "stuck-handler threshold (default the engine's)")
	fs.DurationVar(&c.leaderTTL, "leader-ttl", time.Second, "maintenance leader TTL")
	fs.DurationVar(&c.elect, "elect", 0, "leader election interval (default leader-ttl/3)")
	fs.DurationVar(&c.rescue, "rescue", 250*time.Millisecond, "rescue sweep interval")
	fs.DurationVar(&c.schedule, "schedule", 100*time.Millisecond, "scheduling sweep interval")
	fs.DurationVar(&c.backoffMin, "backoff-min", 50*time.Millisecond, "retry backoff base")
	fs.DurationVar(&c.backoffMax, "backoff-max", time.Second, "retry backoff cap")
	fs.DurationVar(&c.ledgerMin, "ledger-min", time.Millisecond, "least sleep of a ledger job")
	fs.DurationVar(&c.ledgerMax, "ledger-max", 20*time.Millisecond, "most sleep of a ledger job")
	fs.DurationVar(&c.sleep, "sleep", 100*time.Millisecond, "sleep of a sleep job without args.sleep_ms")
	fs.DurationVar(&c.completeHold, "complete-hold", 0, "how long a ledger job holds its completing transaction open after Task.CompleteTx, before the commit")
	fs.StringVar(&c.sinkURL, "sink-url", "", "the fenced external sink of sink jobs")
	fs.BoolVar(&c.audit, "audit-maintenance", false, "record every maintenance sweep in maintenance_runs")
	fs.BoolVar(&c.noMaintenance, "no-maintenance", false, "never run the maintenance sweeps")
	fs.BoolVar(&c.exitOnStdinEOF, "exit-on-stdin-eof", false, "exit (status 4) when standard input closes")
	fs.BoolVar(&c.startGate, "start-gate", false, `once connected, print "connected pid=<pid>" and wait for a line on standard input before starting the worker`)
	fs.BoolVar(&c.syncCommit, "require-sync-commit", false, "refuse to start when the session's synchronous_commit is off, as docket worker does (the test clusters run with it off, for speed)")
	fs.BoolVar(&c.checkBudget, "check-budget", false, "before starting the worker (after the start gate), warn when the Docket processes' pools and LISTEN connections exceed the connection slots, as docket worker does")
	fs.DurationVar(&c.clockOffset, "clock-offset", 0, "skew the worker's own wall clock (queue.MaintenanceConfig.HostClock) by this much against the host's (clock skew between workers)")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.Func("periodic", "name=spec: a periodic job enqueueing kind periodic in queue periodic (repeatable)", func(v string) error {
		name, spec, ok := strings.Cut(v, "=")
		if !ok {
			return errors.New("want name=spec")
		}
		c.periodic = append(c.periodic, periodicJob(name, spec))
		return nil
	})
	fs.Func("reserve", "name=slots: also work queue name with that many slots of its own (repeatable)", func(v string) error {
		name, n, ok := strings.Cut(v, "=")
		slots, err := strconv.Atoi(n)
		if !ok || err != nil || slots < 1 {
			return errors.New("want name=slots, slots at least 1")
		}
		if c.reserved == nil {
			c.reserved = map[string]int{}
		}
		c.reserved[name] = slots
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case c.databaseURL == "":
		return nil, errors.New("-database-url is required")
	case c.concurrency < 1:
		return nil, errors.New("-concurrency must be at least 1")
	case c.ledgerMin < 0 || c.ledgerMax < c.ledgerMin:
		return nil, errors.New("want 0 <= -ledger-min <= -ledger-max")
	}
	if c.id == "" {
		c.id = fmt.Sprintf("chaos-%d", os.Getpid())
	}
	if c.pool == 0 {
		c.pool = c.concurrency + 4
	}
	return c, nil
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})).
		With("pid", os.Getpid())
	var gate <-chan struct{}
	if c.exitOnStdinEOF || c.startGate {
		gate = watchStdin(stdin, c.exitOnStdinEOF, logger)
	}

	pcfg, err := pgxpool.ParseConfig(c.databaseURL)
	if err != nil {
		return fmt.Errorf("database url: %w", err)
	}
	pcfg.MaxConns = int32(c.pool) //nolint:gosec // bounded by the flag's use
	// Named as docket worker names its sessions (postgres.ProcessName:
	// "docket chaosworker <host>:<pid> pool=<n>"), so a test can see when
	// the server has ended every session of a killed worker (its last
	// statements included), and -check-budget counts the others.
	postgres.NameProcess(pcfg, "chaosworker")
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer pool.Close()
	// Wait out a full connection budget or a server still starting, as
	// docket worker does (postgres.OpenWaiting).
	if err := postgres.WaitReady(ctx, pool, func(err error, wait time.Duration) {
		logger.Warn("database not ready; retrying", "err", err, "in", wait)
	}); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	if c.syncCommit {
		if err := postgres.CheckSyncCommit(ctx, pool); err != nil {
			return err
		}
	}
	if c.startGate {
		fmt.Fprintf(stdout, "connected pid=%d\n", os.Getpid())
		select {
		case <-gate:
		case <-ctx.Done():
			return nil
		}
	}
	if c.checkBudget {
		b, err := postgres.ReadConnBudget(ctx, pool)
		if err != nil {
			return err
		}
		if !b.FleetFits() {
			logger.Warn("connection budget: "+b.Warning(), "processes", b.Processes, "want", b.ProcessWant,
				"slots", b.ProcessFree, "this_process_want", b.Want, "free", b.Free, "others_open", b.OtherSessions)
		}
	}
	if !c.startGate {
		n, took := warmPool(ctx, pool, c.pool)
		logger.Info("pool warmed", "connections", n, "of", c.pool, "took", took.Round(time.Millisecond))
	}
	driver := postgres.New(pool)
	defer driver.Close()

	client := queue.NewClient(driver, queue.ClientConfig{Logger: logger})
	h := &handlers{pool: pool, pid: os.Getpid(), cfg: c, logger: logger}
	queues := map[string]queue.QueueConfig{c.queue: {MaxWorkers: c.concurrency}}
	for name, slots := range c.reserved {
		queues[name] = queue.QueueConfig{MaxWorkers: slots}
	}
	worker, err := queue.NewWorker(client, queue.WorkerConfig{
		ID:                c.id,
		Queues:            queues,
		Handlers:          h.configs(),
		LeaseDuration:     c.lease,
		HeartbeatInterval: c.heartbeat,
		PollInterval:      c.poll,
		ShutdownGrace:     c.grace,
		StuckThreshold:    c.stuck,
		Backoff:           queue.ExponentialBackoff(c.backoffMin, c.backoffMax),
		Maintenance: queue.MaintenanceConfig{
			Disabled:         c.noMaintenance,
			LeaderTTL:        c.leaderTTL,
			ElectInterval:    c.elect,
			RescueInterval:   c.rescue,
			ScheduleInterval: c.schedule,
			HostClock:        hostClock(c.clockOffset),
		},
		Periodic: c.periodic,
		Hooks:    queue.Hooks{Maintained: h.maintained},
		Logger:   logger,
	})
	if err != nil {
		return err
	}

	done := make(chan error, 1)
	go func() { done <- worker.Run(ctx) }()
	fmt.Fprintf(stdout, "ready pid=%d id=%s\n", os.Getpid(), c.id)
	if err := <-done; err != nil {
		return fmt.Errorf("run: %w", err)
	}
	logger.Info("clean shutdown")
	return nil
}

// warmPool opens up to n connections of pool at once and returns them to
// it idle, before the worker starts: how many it opened and how long that
// took. A cold pool opens a connection for each of the worker's first
// statements (eight handlers, the claim, the heartbeat, the election) all
// at once; on the loaded 2-core box, three workers opening ~30 sessions in
// a database just created kept 8-9 connections constructing for 0.85 s
// (pgxpool.Stat, 2026-11-25), and a heartbeat (deadline lease/2) or a
// leader's renewal (TTL 1 s) that waited for one missed its deadline in
// the first second of the leader-failover test: start-up, not the fault a scenario injects.
// A connection it cannot open (a full budget) is left for later. The budget test's
// workers (-start-gate) skip it: their pools' growth into the budget is
// that scenario.
func warmPool(ctx context.Context, pool *pgxpool.Pool, n int) (int, time.Duration) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conns := make(chan *pgxpool.Conn, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if c, err := pool.Acquire(ctx); err == nil {
				conns <- c
			}
		})
	}
	wg.Wait()
	close(conns)
	opened := 0
	for c := range conns {
		c.Release()
		opened++
	}
	return opened, time.Since(start)
}

// watchStdin reads standard input: the returned channel is closed at its
// first line (the start gate); at its end, with exitOnEOF, the process
// exits with status 4 (the test process is gone).
func watchStdin(stdin io.Reader, exitOnEOF bool, logger *slog.Logger) <-chan struct{} {
	line := make(chan struct{})
	go func() {
		r := bufio.NewReader(stdin)
		opened := false
		for {
			_, err := r.ReadString('\n')
			if err != nil {
				if exitOnEOF {
					logger.Error("standard input closed; the test process is gone; exiting")
					os.Exit(4)
				}
				return
			}
			if !opened {
				opened = true
				close(line)
			}
		}
	}()
	return line
}

// periodicJob enqueues, per tick, a job that names the job and its tick.
func periodicJob(name, spec string) queue.PeriodicJob {
	return queue.PeriodicJob{Name: name, Schedule: spec, Params: func(tick time.Time) *queue.EnqueueParams {
		return &queue.EnqueueParams{Queue: "periodic", Kind: "periodic", TenantID: "periodic",
			Args: map[string]any{"name": name, "tick": tick}}
	}}
}

// hostClock is the worker's wall clock, offset from the host's by off
// (nil, the engine's default, when off is zero).
func hostClock(off time.Duration) func() time.Time {
	if off == 0 {
		return nil
	}
	return func() time.Time { return time.Now().Add(off) }
}
