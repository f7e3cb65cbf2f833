package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/docketq/docket/queue"
)

// workerFlags configure the job runtime of serve and worker.
type workerFlags struct {
	concurrency int
	grace       time.Duration
}

func (f *workerFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.IntVar(&f.concurrency, "concurrency", 10, "jobs this process runs at once")
	fs.DurationVar(&f.grace, "shutdown-grace", 30*time.Second, "time running jobs get to finish on SIGTERM")
	_ = getenv
}

func (f *workerFlags) config() queue.WorkerConfig {
	return queue.WorkerConfig{
		Queues:        map[string]queue.QueueConfig{queue.DefaultQueue: {MaxWorkers: f.concurrency}},
		Handlers:      map[string]queue.HandlerConfig{demoKind: {Handler: queue.HandlerFunc(demoHandler), Timeout: time.Minute}},
		ShutdownGrace: f.grace,
	}
}

func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	var wf workerFlags
	sf.register(fs, getenv)
	wf.register(fs, getenv)
	demoJobs := fs.Int("demo-jobs", 12, "demo jobs to enqueue across four tenants at start (0 for none)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	logger, err := sf.logger(stderr)
	if err != nil {
		return err
	}
	d, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	client := queue.NewClient(d, queue.ClientConfig{Logger: logger})
	cfg := wf.config()
	cfg.Logger = logger
	w, err := queue.NewWorker(client, cfg)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	events, unsubscribe := client.Bus().Subscribe(1024, nil)
	defer unsubscribe()
	wg.Go(func() { printEvents(stdout, events) })
	if err := enqueueDemo(ctx, client, *demoJobs); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "docket: working; press Ctrl-C to stop\n")
	return w.Run(ctx)
}

const demoKind = "demo"

var demoStages = []struct {
	name     string
	from, to int
}{{"downloading", 0, 5}, {"parsing", 5, 55}, {"chunking", 55, 65}, {"embedding", 65, 85}, {"analyzing", 85, 100}}

// demoHandler walks a job through the document stages with progress, taking
// a second or two.
func demoHandler(ctx context.Context, t *queue.Task) error {
	for _, s := range demoStages {
		for p := s.from; p < s.to; p += 5 {
			if err := t.Progress(ctx, s.name, p, ""); err != nil {
				return err
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(20+rand.IntN(60)) * time.Millisecond):
			}
		}
	}
	return nil
}

func enqueueDemo(ctx context.Context, c *queue.Client, n int) error {
	tenants := []string{"acme", "globex", "initech", "umbrella"}
	params := make([]*queue.EnqueueParams, n)
	for i := range params {
		params[i] = &queue.EnqueueParams{Kind: demoKind, TenantID: tenants[i%len(tenants)], Args: map[string]int{"n": i}}
	}
	if n == 0 {
		return nil
	}
	if _, err := c.EnqueueMany(ctx, params); err != nil {
		return fmt.Errorf("enqueue demo jobs: %w", err)
	}
	return nil
}

func printEvents(w io.Writer, events <-chan queue.Event) {
	for e := range events {
		j := e.Job
		switch e.Type {
		case queue.EventProgress:
			fmt.Fprintf(w, "job %-4d tenant %-9s %-12s %3d%%\n", j.ID, j.TenantID, j.Stage, j.Progress)
		case queue.EventFailed, queue.EventRetrying:
			fmt.Fprintf(w, "job %-4d tenant %-9s %-12s %s\n", j.ID, j.TenantID, e.Type, j.ErrorMessage)
		default:
			fmt.Fprintf(w, "job %-4d tenant %-9s %s\n", j.ID, j.TenantID, e.Type)
		}
	}
}

func runWorker(ctx context.Context, args []string, getenv func(string) string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	var wf workerFlags
	sf.register(fs, getenv)
	wf.register(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	logger, err := sf.logger(stderr)
	if err != nil {
		return err
	}
	d, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	if !d.Capabilities().MultiProcess {
		logger.Warn("the embedded store serves one process; run docket serve, or use PostgreSQL for separate workers")
	}
	cfg := wf.config()
	cfg.Logger = logger
	w, err := queue.NewWorker(queue.NewClient(d, queue.ClientConfig{Logger: logger}), cfg)
	if err != nil {
		return err
	}
	return w.Run(ctx)
}

func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if _, err := sf.logger(stderr); err != nil {
		return err
	}
	d, err := sf.open(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "docket: schema up to date")
	return errors.Join(d.Close())
}
