package queuetest_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/queuetest"
	"github.com/docketq/docket/queue/sqlite"
)

type WelcomeArgs struct {
	Email string `json:"email"`
}

var Welcome = queue.Kind[WelcomeArgs]{Name: "welcome_mail"}

// signUp is the application's code under test: it stores a user and
// enqueues their welcome mail in the caller's transaction.
func signUp(ctx context.Context, client *queue.Client, tx *sql.Tx, email string) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO users VALUES (?)`, email); err != nil {
		return err
	}
	_, err := Welcome.EnqueueTx(ctx, client, tx, "acme", WelcomeArgs{Email: email})
	return err
}

// openExampleStore opens a migrated SQLite store in a temporary directory;
// close removes it. A test would use t.TempDir.
func openExampleStore(ctx context.Context) (driver *sqlite.Driver, closeStore func()) {
	dir, err := os.MkdirTemp("", "queuetest-example")
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

// A test checks what its code enqueued inside a transaction, before the
// transaction commits, by reading through it.
func ExampleRequireEnqueuedTx() {
	ctx := context.Background()
	// In a test, t is the test's *testing.T.
	t := &testing.T{}
	driver, closeStore := openExampleStore(ctx)
	defer closeStore()
	db := driver.DB()
	if _, err := db.ExecContext(ctx, `CREATE TABLE users (email TEXT PRIMARY KEY)`); err != nil {
		panic(err)
	}
	client := queue.NewClient(driver, queue.ClientConfig{})

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		panic(err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := signUp(ctx, client, tx, "ann@example.com"); err != nil {
		panic(err)
	}

	job := queuetest.RequireEnqueuedTx(ctx, t, client, tx, Welcome.Name, &queuetest.Want{
		TenantID: "acme", Args: WelcomeArgs{Email: "ann@example.com"},
	})
	fmt.Printf("job %d in the transaction: %s %s\n", job.ID, job.Kind, job.Args)
	// Nothing is committed yet: outside the transaction there is no job.
	queuetest.RequireNotEnqueued(ctx, t, client, Welcome.Name, nil)
	fmt.Println("none outside it")
	// Output:
	// job 1 in the transaction: welcome_mail {"email":"ann@example.com"}
	// none outside it
}

// A test runs its handler on one job, synchronously, with a real Task, and
// checks the outcome the engine stored.
func ExampleWork() {
	ctx := context.Background()
	// In a test, t is the test's *testing.T.
	t := &testing.T{}
	driver, closeStore := openExampleStore(ctx)
	defer closeStore()
	client := queue.NewClient(driver, queue.ClientConfig{})

	send := Welcome.Handler(func(ctx context.Context, task *queue.Task, args WelcomeArgs) error {
		if args.Email == "" {
			return queue.Permanent(fmt.Errorf("no address"))
		}
		return task.Progress(ctx, "sending", 50, args.Email)
	})

	res := queuetest.Work(ctx, t, client, send, Welcome.Params("acme", WelcomeArgs{Email: "ann@example.com"}))
	fmt.Printf("job %d: %s (%s), progress %d\n", res.Job.ID, res.Outcome, res.Job.State, res.Job.Progress)

	res = queuetest.Work(ctx, t, client, send, Welcome.Params("acme", WelcomeArgs{}))
	fmt.Printf("job %d: %s (%s): %v\n", res.Job.ID, res.Outcome, res.Job.State, res.Err)
	// Output:
	// job 1: completed (completed), progress 100
	// job 2: failed (failed): no address
}
