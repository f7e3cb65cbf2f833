package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/sqlite"
)

// Open a store, enqueue a job inside the application's own transaction,
// and claim it.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "docket")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	if err := enqueueAndClaim(context.Background(), filepath.Join(dir, "docket.db")); err != nil {
		fmt.Println(err)
	}
	// Output: enqueued: pending; claimed: running, attempt 1
}

func enqueueAndClaim(ctx context.Context, path string) error {
	d, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Migrate(ctx); err != nil {
		return err
	}
	c := queue.NewClient(d, queue.ClientConfig{})

	tx, err := d.DB().BeginTx(ctx, nil) // application transactions begin on DB()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := c.EnqueueTx(ctx, tx, &queue.EnqueueParams{Kind: "process_document", TenantID: "acme"})
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}

	jobs, _, err := d.Executor().JobClaim(ctx, &driver.JobClaimParams{
		Queue: queue.DefaultQueue, WorkerID: "example", Max: 10, LeaseDuration: 30 * time.Second,
	})
	if err != nil {
		return err
	}
	fmt.Printf("enqueued: %s; claimed: %s, attempt %d\n", res.Job.State, jobs[0].State, jobs[0].Attempt)
	return nil
}
