// Command queue-sqlite uses the job engine as a library: it opens the
// embedded SQLite driver in a temporary directory, registers a typed
// handler, enqueues jobs for two tenants, works them until they complete and
// prints what happened.
//
//	go run ./examples/queue-sqlite
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/sqlite"
)

// GreetArgs are the arguments of a greet job.
type GreetArgs struct {
	Name string `json:"name"`
}

// Greet is the job kind; the compiler checks the arguments it is given.
var Greet = queue.Kind[GreetArgs]{Name: "greet"}

func greet(ctx context.Context, t *queue.Task, args GreetArgs) error {
	if err := t.Progress(ctx, "greeting", 50, args.Name); err != nil {
		return err
	}
	result, err := json.Marshal(map[string]string{"greeting": "hello, " + args.Name})
	if err != nil {
		return err
	}
	t.SetResult(result)
	return nil
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err := run(ctx, os.Stdout)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "queue-sqlite:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	dir, err := os.MkdirTemp("", "docket-queue-sqlite")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	driver, err := sqlite.Open(ctx, filepath.Join(dir, "jobs.db"))
	if err != nil {
		return err
	}
	defer driver.Close()
	if err := driver.Migrate(ctx); err != nil {
		return err
	}

	client := queue.NewClient(driver, queue.ClientConfig{})
	done, unsubscribe := client.Bus().Subscribe(16, nil, queue.EventCompleted, queue.EventFailed)
	defer unsubscribe()

	worker, err := queue.NewWorker(client, queue.WorkerConfig{
		Queues:   map[string]queue.QueueConfig{"default": {MaxWorkers: 2}},
		Handlers: map[string]queue.HandlerConfig{Greet.Name: {Handler: Greet.Handler(greet)}},
	})
	if err != nil {
		return err
	}
	workCtx, stop := context.WithCancel(ctx)
	defer stop()
	stopped := make(chan error, 1)
	go func() { stopped <- worker.Run(workCtx) }()

	jobs := map[string][]string{"acme": {"ann", "bob"}, "globex": {"cy"}}
	n := 0
	for _, tenant := range []string{"acme", "globex"} {
		for _, name := range jobs[tenant] {
			res, err := Greet.Enqueue(ctx, client, tenant, GreetArgs{Name: name})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "enqueued job %d for %s\n", res.Job.ID, tenant)
			n++
		}
	}

	var finished []*queue.Job
	for len(finished) < n {
		select {
		case e := <-done:
			finished = append(finished, e.Job)
		case <-ctx.Done():
			return fmt.Errorf("%d of %d jobs finished: %w", len(finished), n, ctx.Err())
		}
	}
	stop()
	if err := <-stopped; err != nil {
		return err
	}

	slices.SortFunc(finished, func(a, b *queue.Job) int { return cmp.Compare(a.ID, b.ID) })
	for _, j := range finished {
		// Events carry the job without its result: read it from the store.
		if j, err = client.Get(ctx, j.ID); err != nil {
			return err
		}
		fmt.Fprintf(out, "job %d of %s: %s %s\n", j.ID, j.TenantID, j.State, j.Result)
	}
	return nil
}
