package queue_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/sqlite"
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

// A handler that writes its effects and completes its job in one
// transaction: both commit or neither does. If the job was taken from this
// worker meanwhile (its lease lost), CompleteTx rolls the transaction back
// and returns ErrLeaseLost, so the effects are never applied twice; the
// handler only has to return the error.
func ExampleTask_CompleteTx() {
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
	db := driver.DB() // on SQLite, transactions for CompleteTx begin on DB()
	if _, err := db.ExecContext(ctx, `CREATE TABLE invoices (job_id INTEGER PRIMARY KEY, total INTEGER)`); err != nil {
		panic(err)
	}

	client := queue.NewClient(driver, queue.ClientConfig{})
	completed, unsubscribe := client.Bus().Subscribe(1, func(e queue.Event) bool { return e.Type == queue.EventCompleted })
	defer unsubscribe()
	invoice := queue.HandlerFunc(func(ctx context.Context, t *queue.Task) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }() // a no-op after Commit
		if _, err := tx.ExecContext(ctx, `INSERT INTO invoices VALUES (?, 42)`, t.Job.ID); err != nil {
			return err
		}
		if err := t.CompleteTx(ctx, tx); err != nil {
			return err // ErrLeaseLost: tx is already rolled back
		}
		return tx.Commit()
	})
	worker, err := queue.NewWorker(client, queue.WorkerConfig{
		Handlers: map[string]queue.HandlerConfig{"invoice": {Handler: invoice}},
	})
	if err != nil {
		panic(err)
	}
	done := make(chan error)
	go func() { done <- worker.Run(ctx) }()
	if _, err := client.Enqueue(ctx, &queue.EnqueueParams{Kind: "invoice", TenantID: "acme"}); err != nil {
		panic(err)
	}
	e := <-completed
	var total int
	if err := db.QueryRowContext(ctx, `SELECT total FROM invoices WHERE job_id = ?`, e.Job.ID).Scan(&total); err != nil {
		panic(err)
	}
	fmt.Printf("job %d %s; invoice total %d\n", e.Job.ID, e.Type, total)
	stop()
	if err := <-done; err != nil {
		panic(err)
	}
	// Output:
	// job 1 completed; invoice total 42
}

// A workflow: the parent fans out three steps, waits for them without
// holding a slot of its tenant (AwaitChildren), and, run again once they
// have all finished, sums their results. Spawn is idempotent per step
// name, so the second run gets the same steps back, finished.
func ExampleTask_Spawn() {
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

	square := queue.HandlerFunc(func(ctx context.Context, t *queue.Task) error {
		var in struct{ N int }
		if err := json.Unmarshal(t.Job.Args, &in); err != nil {
			return queue.Permanent(err)
		}
		t.SetResult(json.RawMessage(fmt.Sprintf(`{"square": %d}`, in.N*in.N)))
		return nil
	})
	sum := queue.HandlerFunc(func(ctx context.Context, t *queue.Task) error {
		var steps []*queue.Step
		for _, n := range []int{1, 2, 3} {
			steps = append(steps, &queue.Step{
				Name:          fmt.Sprintf("square-%d", n),
				EnqueueParams: queue.EnqueueParams{Kind: "square", Args: map[string]int{"n": n}},
			})
		}
		children, err := t.Spawn(ctx, steps...)
		if err != nil {
			return err
		}
		total := 0
		for _, c := range children {
			switch c.Job.State {
			case queue.StateCompleted:
				var out struct{ Square int }
				if err := json.Unmarshal(c.Job.Result, &out); err != nil {
					return err
				}
				total += out.Square
			case queue.StateFailed, queue.StateCancelled:
				return queue.Permanent(fmt.Errorf("step %s failed", c.Job.StepName()))
			default:
				return queue.AwaitChildren() // runs again when all have finished
			}
		}
		t.SetResult(json.RawMessage(fmt.Sprintf(`{"sum": %d}`, total)))
		return nil
	})
	worker, err := queue.NewWorker(client, queue.WorkerConfig{
		Handlers: map[string]queue.HandlerConfig{"sum": {Handler: sum}, "square": {Handler: square}},
	})
	if err != nil {
		panic(err)
	}
	done := make(chan error)
	go func() { done <- worker.Run(ctx) }()

	events, unsubscribe := client.Bus().Subscribe(100, func(e queue.Event) bool {
		return e.Job.Kind == "sum" && (e.Type == queue.EventCompleted || e.Type == queue.EventWaiting)
	})
	defer unsubscribe()
	res, err := client.Enqueue(ctx, &queue.EnqueueParams{Kind: "sum", TenantID: "acme"})
	if err != nil {
		panic(err)
	}
	for e := range events {
		fmt.Printf("sum: %s\n", e.Type)
		if e.Type == queue.EventCompleted {
			break
		}
	}
	job, err := client.Get(ctx, res.Job.ID)
	if err != nil {
		panic(err)
	}
	fmt.Printf("result %s\n", job.Result)
	stop()
	if err := <-done; err != nil {
		panic(err)
	}
	// Output:
	// sum: waiting
	// sum: completed
	// result {"sum": 14}
}
