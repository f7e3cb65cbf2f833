package queue_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/sqlite"
)

// A worker runs jobs of each tenant in order while reporting progress; the
// client enqueues them and watches their events.
func Example() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	dir, _ := os.MkdirTemp("", "docket-example")
	defer os.RemoveAll(dir)
	driver, err := sqlite.Open(ctx, filepath.Join(dir, "docket.db"))
	if err != nil {
		panic(err)
	}
	defer driver.Close()
	if err := driver.Migrate(ctx); err != nil {
		panic(err)
	}

	client := queue.NewClient(driver, queue.ClientConfig{})
	events, unsubscribe := client.Bus().Subscribe(100, func(e queue.Event) bool {
		return e.Type == queue.EventCompleted
	})
	defer unsubscribe()

	resize := queue.HandlerFunc(func(ctx context.Context, t *queue.Task) error {
		return t.Progress(ctx, "resizing", 50, "halfway")
	})
	worker, err := queue.NewWorker(client, queue.WorkerConfig{
		Handlers: map[string]queue.HandlerConfig{"resize": {Handler: resize}},
	})
	if err != nil {
		panic(err)
	}
	done := make(chan error)
	go func() { done <- worker.Run(ctx) }()

	for _, img := range []string{"a.png", "b.png"} {
		if _, err := client.Enqueue(ctx, &queue.EnqueueParams{
			Kind: "resize", TenantID: "acme", Args: map[string]string{"image": img},
		}); err != nil {
			panic(err)
		}
	}
	for range 2 {
		e := <-events
		fmt.Printf("job %d of %s: %s\n", e.Job.ID, e.Job.TenantID, e.Type)
	}
	stop()
	if err := <-done; err != nil {
		panic(err)
	}
	// Output:
	// job 1 of acme: completed
	// job 2 of acme: completed
}
