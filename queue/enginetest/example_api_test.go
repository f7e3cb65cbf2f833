package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/sqlite"
)

// openExampleStore opens a migrated SQLite store in a temporary directory;
// close removes it.
func openExampleStore(ctx context.Context) (driver *sqlite.Driver, closeStore func()) {
	dir, err := os.MkdirTemp("", "docket-example")
	if err != nil {
		panic(err)
	}
	driver, err = sqlite.Open(ctx, filepath.Join(dir, "docket.db"))
	if err != nil {
		panic(err)
	}
	if err := driver.Migrate(ctx); err != nil {
		panic(err)
	}
	return driver, func() { driver.Close(); os.RemoveAll(dir) }
}

// because formats a job's error message after its state.
func because(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}

// A client enqueues jobs and reads them back; no worker is needed for
// that. A second enqueue with the same unique key returns the first job.
func ExampleNewClient() {
	ctx := context.Background()
	driver, closeStore := openExampleStore(ctx)
	defer closeStore()

	client := queue.NewClient(driver, queue.ClientConfig{})
	for range 2 {
		res, err := client.Enqueue(ctx, &queue.EnqueueParams{
			Kind: "report", TenantID: "acme", Args: map[string]int{"month": 11},
			UniqueKey: "report-2026-11",
		})
		if err != nil {
			panic(err)
		}
		fmt.Printf("job %d: %s, duplicate %v\n", res.Job.ID, res.Job.State, res.Duplicate)
	}
	job, err := client.Get(ctx, 1)
	if err != nil {
		panic(err)
	}
	fmt.Printf("job %d of %s: kind %s, args %s, attempts %d of %d\n",
		job.ID, job.TenantID, job.Kind, job.Args, job.Attempt, job.MaxAttempts)
	// Output:
	// job 1: pending, duplicate false
	// job 1: pending, duplicate true
	// job 1 of acme: kind report, args {"month":11}, attempts 0 of 3
}

// EnqueueTx stores a job inside the application's own transaction: the
// job exists if and only if the transaction commits, so a signup and its
// welcome mail are stored together or not at all.
func ExampleClient_EnqueueTx() {
	ctx := context.Background()
	driver, closeStore := openExampleStore(ctx)
	defer closeStore()
	db := driver.DB() // on SQLite, the application's transactions begin on DB()
	if _, err := db.ExecContext(ctx, `CREATE TABLE users (email TEXT PRIMARY KEY)`); err != nil {
		panic(err)
	}
	client := queue.NewClient(driver, queue.ClientConfig{})

	signUp := func(email string, commit bool) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			panic(err)
		}
		defer func() { _ = tx.Rollback() }() // a no-op after Commit
		if _, err := tx.ExecContext(ctx, `INSERT INTO users VALUES (?)`, email); err != nil {
			panic(err)
		}
		if _, err := client.EnqueueTx(ctx, tx, &queue.EnqueueParams{
			Kind: "welcome_mail", TenantID: "acme", Args: map[string]string{"to": email},
		}); err != nil {
			panic(err)
		}
		if commit {
			if err := tx.Commit(); err != nil {
				panic(err)
			}
		}
	}
	signUp("ann@example.com", true)
	signUp("bob@example.com", false) // rolled back: no user, no mail

	jobs, err := client.List(ctx, &queue.JobListParams{Kind: "welcome_mail"})
	if err != nil {
		panic(err)
	}
	for _, j := range jobs {
		fmt.Printf("job %d: %s\n", j.ID, j.Args)
	}
	// Output:
	// job 1: {"to":"ann@example.com"}
}

// A worker runs the handlers of the kinds it is configured with, on the
// queues it is given, until Run's context ends. A kind's Timeout cancels a
// handler that runs too long; with its attempts spent, the job fails.
func ExampleNewWorker() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	driver, closeStore := openExampleStore(ctx)
	defer closeStore()
	client := queue.NewClient(driver, queue.ClientConfig{})
	finished, unsubscribe := client.Bus().Subscribe(10, func(e queue.Event) bool {
		return e.Type == queue.EventCompleted || e.Type == queue.EventFailed
	})
	defer unsubscribe()

	worker, err := queue.NewWorker(client, queue.WorkerConfig{
		Queues: map[string]queue.QueueConfig{"thumbnails": {MaxWorkers: 4}},
		Handlers: map[string]queue.HandlerConfig{
			"thumbnail": {Handler: queue.HandlerFunc(func(ctx context.Context, t *queue.Task) error {
				return t.Progress(ctx, "resizing", 100, "done")
			})},
			"transcode": {
				Handler: queue.HandlerFunc(func(ctx context.Context, t *queue.Task) error {
					<-ctx.Done() // far too slow: stopped by the timeout
					return ctx.Err()
				}),
				Timeout: 50 * time.Millisecond,
			},
		},
		ShutdownGrace: 10 * time.Second,
	})
	if err != nil {
		panic(err)
	}
	done := make(chan error)
	go func() { done <- worker.Run(ctx) }()

	for _, kind := range []string{"thumbnail", "transcode"} {
		if _, err := client.Enqueue(ctx, &queue.EnqueueParams{
			Queue: "thumbnails", Kind: kind, TenantID: "acme", MaxAttempts: 1,
		}); err != nil {
			panic(err)
		}
	}
	for range 2 {
		e := <-finished
		fmt.Printf("job %d (%s): %s%s\n", e.Job.ID, e.Job.Kind, e.Type, because(e.Job.ErrorMessage))
	}
	stop() // Run stops claiming, lets running jobs finish within ShutdownGrace, and returns
	if err := <-done; err != nil {
		panic(err)
	}
	// Output:
	// job 1 (thumbnail): completed
	// job 2 (transcode): failed: job timed out: context deadline exceeded
}

// RunOne claims one job and runs it on the caller's behalf: for tests, and
// for programs that work jobs one at a time on their own schedule. It
// returns the job as stored after the attempt.
func ExampleWorker_RunOne() {
	ctx := context.Background()
	driver, closeStore := openExampleStore(ctx)
	defer closeStore()
	client := queue.NewClient(driver, queue.ClientConfig{})
	worker, err := queue.NewWorker(client, queue.WorkerConfig{
		Handlers: map[string]queue.HandlerConfig{
			"sync": {Handler: queue.HandlerFunc(func(ctx context.Context, t *queue.Task) error {
				if t.Job.Attempt == 1 {
					return errors.New("remote busy")
				}
				return nil
			})},
		},
	})
	if err != nil {
		panic(err)
	}
	if _, err := client.Enqueue(ctx, &queue.EnqueueParams{Kind: "sync", TenantID: "acme"}); err != nil {
		panic(err)
	}
	job, err := worker.RunOne(ctx, queue.DefaultQueue)
	if err != nil {
		panic(err)
	}
	fmt.Printf("job %d: %s after attempt %d%s\n", job.ID, job.State, job.Attempt, because(job.ErrorMessage))
	job, err = worker.RunOne(ctx, queue.DefaultQueue)
	fmt.Printf("next: %v, %v (the retry waits for its backoff)\n", job, err)
	// Output:
	// job 1: scheduled after attempt 1: remote busy
	// next: <nil>, <nil> (the retry waits for its backoff)
}

type ResizeArgs struct {
	Image string `json:"image"`
	Width int    `json:"width"`
}

// Resize is a job kind whose arguments are a ResizeArgs: the enqueuing
// code and the handler agree on the type at compile time.
var Resize = queue.Kind[ResizeArgs]{Name: "resize"}

// A handler declares its argument type; the engine decodes Job.Args into
// it. Arguments that do not decode fail the job at once, without retries.
func ExampleJSONHandler() {
	ctx := context.Background()
	driver, closeStore := openExampleStore(ctx)
	defer closeStore()
	client := queue.NewClient(driver, queue.ClientConfig{})

	resize := queue.JSONHandler(func(ctx context.Context, t *queue.Task, args ResizeArgs) error {
		fmt.Printf("resizing %s to %d px\n", args.Image, args.Width)
		return nil
	})
	worker, err := queue.NewWorker(client, queue.WorkerConfig{
		Handlers: map[string]queue.HandlerConfig{"resize": {Handler: resize}},
	})
	if err != nil {
		panic(err)
	}
	for _, args := range []string{`{"image":"a.png","width":640}`, `{"image":"b.png","width":"wide"}`} {
		if _, err := client.Enqueue(ctx, &queue.EnqueueParams{Kind: "resize", TenantID: "acme", Args: json.RawMessage(args)}); err != nil {
			panic(err)
		}
		job, err := worker.RunOne(ctx, queue.DefaultQueue)
		if err != nil {
			panic(err)
		}
		fmt.Printf("job %d: %s%s\n", job.ID, job.State, because(job.ErrorMessage))
	}
	// Output:
	// resizing a.png to 640 px
	// job 1: completed
	// job 2: failed: decode args of kind "resize" into queue_test.ResizeArgs: json: cannot unmarshal string into Go struct field ResizeArgs.width of type int
}

// Kind ties a job kind to its argument type for enqueueing, handling and
// reading jobs back.
func ExampleKind() {
	ctx := context.Background()
	driver, closeStore := openExampleStore(ctx)
	defer closeStore()
	client := queue.NewClient(driver, queue.ClientConfig{})
	worker, err := queue.NewWorker(client, queue.WorkerConfig{
		Handlers: map[string]queue.HandlerConfig{
			Resize.Name: {Handler: Resize.Handler(func(ctx context.Context, t *queue.Task, args ResizeArgs) error {
				fmt.Printf("resizing %s to %d px\n", args.Image, args.Width)
				return nil
			})},
		},
	})
	if err != nil {
		panic(err)
	}

	if _, err := Resize.Enqueue(ctx, client, "acme", ResizeArgs{Image: "a.png", Width: 640}); err != nil {
		panic(err)
	}
	p := Resize.Params("acme", ResizeArgs{Image: "b.png", Width: 320})
	p.Priority = 10 // within the tenant, before a.png
	if _, err := client.Enqueue(ctx, p); err != nil {
		panic(err)
	}
	for range 2 {
		job, err := worker.RunOne(ctx, queue.DefaultQueue)
		if err != nil {
			panic(err)
		}
		args, err := Resize.Args(job)
		if err != nil {
			panic(err)
		}
		fmt.Printf("job %d (%s): %s\n", job.ID, args.Image, job.State)
	}
	// Output:
	// resizing b.png to 320 px
	// job 2 (b.png): completed
	// resizing a.png to 640 px
	// job 1 (a.png): completed
}
