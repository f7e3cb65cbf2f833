package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue"
)

// TestExample_EnqueueOnInsertTrigger applies examples/sql/enqueue_on_insert.sql
// as a user would (one psql-style script) and checks what it promises: an
// application INSERT enqueues a job in the same transaction (a rolled-back
// insert leaves none), the row records its job, the trigger firing again
// for an invoice finds the existing job, and a worker runs the jobs with
// the invoice in their args, FIFO within each customer.
func TestExample_EnqueueOnInsertTrigger(t *testing.T) {
	t.Parallel()
	f := setup(t)
	script, err := os.ReadFile("../examples/sql/enqueue_on_insert.sql")
	if err != nil {
		t.Fatal(err)
	}
	f.exec(string(script))
	f.exec(string(script)) // re-applying the example is harmless

	insert := func(tx pgx.Tx, customer string, amount int) (id, job int64) {
		t.Helper()
		if err := tx.QueryRow(f.ctx, `INSERT INTO invoices (customer_id, amount) VALUES ($1, $2) RETURNING id, job_id`,
			customer, amount).Scan(&id, &job); err != nil {
			t.Fatalf("insert invoice: %v", err)
		}
		return id, job
	}
	// A rolled-back insert enqueues nothing.
	tx, err := f.d.Pool().Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	insert(tx, "acme", 999)
	if err := tx.Rollback(f.ctx); err != nil {
		t.Fatal(err)
	}
	if n := f.queryInt(`SELECT count(*) FROM docket_jobs`); n != 0 {
		t.Fatalf("%d jobs after a rolled-back invoice, want 0", n)
	}

	// Committed inserts: one job each, recorded on the row.
	type invoice struct {
		customer string
		id, job  int64
	}
	var invoices []invoice
	if err := pgx.BeginFunc(f.ctx, f.d.Pool(), func(tx pgx.Tx) error {
		for i, c := range []string{"acme", "globex", "acme", "acme", "globex"} {
			id, job := insert(tx, c, 100*(i+1))
			invoices = append(invoices, invoice{c, id, job})
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, inv := range invoices {
		j, err := f.x.JobGet(f.ctx, inv.job)
		if err != nil {
			t.Fatalf("invoice %d's job %d: %v", inv.id, inv.job, err)
		}
		if j.Kind != "invoice.render" || j.TenantID != inv.customer || j.State != queue.StatePending ||
			j.MaxAttempts != 5 || j.UniqueKey != fmt.Sprintf("invoice-%d", inv.id) {
			t.Fatalf("invoice %d's job: %+v", inv.id, j)
		}
	}
	var again int64
	if err := f.d.Pool().QueryRow(f.ctx, `SELECT docket_enqueue('default', 'invoice.render', 'acme', unique_key => 'invoice-' || $1::bigint)`,
		invoices[0].id).Scan(&again); err != nil || again != invoices[0].job {
		t.Fatalf("the trigger's enqueue again for invoice %d: job %d, %v; want the existing %d", invoices[0].id, again, err, invoices[0].job)
	}

	// A worker runs them.
	var (
		mu  sync.Mutex
		ran = map[string][]int64{} // invoice ids by customer, in run order
	)
	render := queue.HandlerFunc(func(_ context.Context, task *queue.Task) error {
		var args struct {
			InvoiceID int64 `json:"invoice_id"`
		}
		if err := json.Unmarshal(task.Job.Args, &args); err != nil || args.InvoiceID == 0 {
			return queue.Permanent(fmt.Errorf("args %s carry no invoice", task.Job.Args))
		}
		mu.Lock()
		ran[task.Job.TenantID] = append(ran[task.Job.TenantID], args.InvoiceID)
		mu.Unlock()
		return nil
	})
	client := queue.NewClient(f.d, queue.ClientConfig{})
	w, err := queue.NewWorker(client, queue.WorkerConfig{
		Handlers:     map[string]queue.HandlerConfig{"invoice.render": {Handler: render}},
		PollInterval: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for f.queryInt(`SELECT count(*) FROM docket_jobs WHERE state = 'completed'`) < int64(len(invoices)) {
		if time.Now().After(deadline) {
			t.Fatalf("jobs not completed within 30 s: %d of %d", f.queryInt(`SELECT count(*) FROM docket_jobs WHERE state = 'completed'`), len(invoices))
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("worker: %v", err)
	}
	want := map[string][]int64{}
	for _, inv := range invoices {
		want[inv.customer] = append(want[inv.customer], inv.id)
	}
	mu.Lock()
	defer mu.Unlock()
	for c, ids := range want {
		if fmt.Sprint(ran[c]) != fmt.Sprint(ids) {
			t.Errorf("customer %s's invoices rendered in order %v, want %v (FIFO)", c, ran[c], ids)
		}
	}
}
