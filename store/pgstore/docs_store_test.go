package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// docsSetup returns a driver on a fresh database with tenants a and b.
func docsSetup(t *testing.T) (*testStore, context.Context) {
	t.Helper()
	d := newStore(t)
	ctx := t.Context()
	for _, id := range []string{"a", "b"} {
		if _, err := d.TenantCreate(ctx, &docket.TenantCreateParams{ID: id, Name: "Tenant " + id}); err != nil {
			t.Fatalf("TenantCreate(%s): %v", id, err)
		}
	}
	return d, ctx
}

// inTenant runs fn in InTenant and fails t on an error.
func inTenant(t *testing.T, d *testStore, tenant string, fn func(tx docket.Tx) error) {
	t.Helper()
	if err := d.InTenant(t.Context(), tenant, fn); err != nil {
		t.Fatalf("InTenant(%s): %v", tenant, err)
	}
}

// TestDocs_EnqueueAndFinishInTenant: the engine's enqueue and finish work
// inside a tenant transaction (role docket_app, row-level security on), and
// the document's status follows its job.
func TestDocs_EnqueueAndFinishInTenant(t *testing.T) {
	t.Parallel()
	d, ctx := docsSetup(t)
	client := queue.NewClient(d, queue.ClientConfig{})
	doc := &docket.Document{ID: "doc-1", Filename: "a.txt", BlobKey: "a/doc-1/x"}
	inTenant(t, d, "a", func(tx docket.Tx) error {
		res, err := client.EnqueueTx(ctx, tx.Native(), &queue.EnqueueParams{Queue: "documents", Kind: "process", TenantID: "a"})
		if err != nil {
			return err
		}
		doc.JobID = res.Job.ID
		return tx.DocumentInsert(ctx, doc)
	})
	wantDocStatus(t, d, "a", doc.ID, docket.StatusPending)

	jobs, _, err := d.Executor().JobClaim(ctx, &driver.JobClaimParams{Queue: "documents", WorkerID: "w", Max: 1, LeaseDuration: time.Hour})
	if err != nil || len(jobs) != 1 || jobs[0].ID != doc.JobID {
		t.Fatalf("claim: %v, %v", jobs, err)
	}
	wantDocStatus(t, d, "a", doc.ID, docket.StatusProcessing)

	finish := []*driver.JobFinishParams{{Lease: jobs[0].Lease(), Outcome: queue.OutcomeCompleted, WorkerID: "w"}}
	// Tenant b cannot finish tenant a's job: row-level security hides it.
	if err := finishIn(t, d, "b", finish, nil); !errors.Is(err, queue.ErrLeaseLost) {
		t.Fatalf("JobFinish of another tenant's job: %v, want ErrLeaseLost", err)
	}
	status := docket.StatusCompleted
	if err := finishIn(t, d, "a", finish, &status); err != nil {
		t.Fatalf("JobFinish in tenant a: %v", err)
	}
	wantDocStatus(t, d, "a", doc.ID, docket.StatusCompleted)
	var running int
	err = d.Pool().QueryRow(ctx, `SELECT running FROM docket_tenant_queues WHERE tenant_id = 'a'`).Scan(&running)
	if err != nil || running != 0 {
		t.Fatalf("tenant a running = %d (%v), want 0 after the finish", running, err)
	}
	// The completing attempt is read from the job's row (postgres
	// finishSQL writes no record for it).
	if as, err := d.Executor().JobAttempts(ctx, jobs[0].ID); err != nil || len(as) != 1 || as[0].Outcome != queue.OutcomeCompleted {
		t.Fatalf("attempts = %+v (%v), want one, completed", as, err)
	}
	// The job gone (retention), the recorded status stands.
	if _, err := d.Pool().Exec(ctx, `DELETE FROM docket_jobs`); err != nil {
		t.Fatal(err)
	}
	wantDocStatus(t, d, "a", doc.ID, docket.StatusCompleted)
}

// TestDocs_CompleteTxWorker: a real worker's handler completes its job
// with queue.Task.CompleteTx inside InTenant.
func TestDocs_CompleteTxWorker(t *testing.T) {
	t.Parallel()
	d, ctx := docsSetup(t)
	client := queue.NewClient(d, queue.ClientConfig{})
	done := make(chan error, 1)
	h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
		err := d.InTenant(ctx, task.Job.TenantID, func(tx docket.Tx) error {
			status := docket.StatusCompleted
			if _, err := tx.DocumentUpdate(ctx, &docket.DocumentUpdateParams{ID: "doc-w", Status: &status}); err != nil {
				return err
			}
			return task.CompleteTx(ctx, tx.Native())
		})
		done <- err
		return err
	})
	w, err := queue.NewWorker(client, queue.WorkerConfig{
		Queues:       map[string]queue.QueueConfig{"documents": {MaxWorkers: 1}},
		Handlers:     map[string]queue.HandlerConfig{"process": {Handler: h}},
		PollInterval: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	inTenant(t, d, "a", func(tx docket.Tx) error {
		res, err := client.EnqueueTx(ctx, tx.Native(), &queue.EnqueueParams{Queue: "documents", Kind: "process", TenantID: "a"})
		if err != nil {
			return err
		}
		return tx.DocumentInsert(ctx, &docket.Document{ID: "doc-w", JobID: res.Job.ID})
	})
	wctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- w.Run(wctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the worker did not run the job")
	}
	stop()
	if err := <-ran; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("worker: %v", err)
	}
	wantDocStatus(t, d, "a", "doc-w", docket.StatusCompleted)
	var state string
	if err := d.Pool().QueryRow(ctx, `SELECT state FROM docket_jobs`).Scan(&state); err != nil || state != "completed" {
		t.Fatalf("job state %q (%v), want completed", state, err)
	}
}

// finishIn finishes jobs inside InTenant with the executor of the tenant
// transaction and records status on doc-1 when it is not nil. It returns
// the first error, the finish's own included.
func finishIn(t *testing.T, d *testStore, tenant string, finish []*driver.JobFinishParams, status *docket.DocumentStatus) error {
	t.Helper()
	ctx := t.Context()
	return d.InTenant(ctx, tenant, func(tx docket.Tx) error {
		x, err := d.UnwrapTx(tx.Native())
		if err != nil {
			return err
		}
		errs, err := x.JobFinish(ctx, finish)
		if err != nil {
			return err
		}
		if errs[0] != nil {
			return errs[0]
		}
		if status != nil {
			_, err = tx.DocumentUpdate(ctx, &docket.DocumentUpdateParams{ID: "doc-1", Status: status})
		}
		return err
	})
}

func wantDocStatus(t *testing.T, d *testStore, tenant, id string, want docket.DocumentStatus) {
	t.Helper()
	err := d.ReadTenant(t.Context(), tenant, func(tx docket.Tx) error {
		doc, err := tx.DocumentGet(t.Context(), id)
		if err != nil {
			return err
		}
		if doc.Status != want {
			t.Errorf("document %s status %s, want %s", id, doc.Status, want)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("DocumentGet(%s): %v", id, err)
	}
}

// TestDocs_ScopeIsTransactionLocal: inside InTenant the role is docket_app
// and the tenant set; after it, the pooled connection is the owner's again.
func TestDocs_ScopeIsTransactionLocal(t *testing.T) {
	t.Parallel()
	d, ctx := docsSetup(t)
	inTenant(t, d, "a", func(tx docket.Tx) error {
		var user, tenant string
		err := tx.Native().(pgx.Tx).QueryRow(ctx, `SELECT current_user, current_setting('app.tenant_id', true)`).Scan(&user, &tenant)
		if user != "docket_app" || tenant != "a" {
			t.Errorf("in InTenant: user %q tenant %q, want docket_app a", user, tenant)
		}
		return err
	})
	err := d.ReadTenant(ctx, "a", func(tx docket.Tx) error {
		return tx.DocumentInsert(ctx, &docket.Document{ID: "ro"})
	})
	if !errors.Is(err, docket.ErrInvalid) {
		t.Fatalf("DocumentInsert in ReadTenant: %v, want ErrInvalid", err)
	}
	if err := d.InTenant(ctx, "", func(docket.Tx) error { return nil }); !errors.Is(err, docket.ErrInvalid) {
		t.Fatalf("InTenant without a tenant: %v, want ErrInvalid", err)
	}
}

// TestDocs_CrossTenantJob: inside tenant a's transaction, enqueueing a job
// of tenant b is refused by row-level security, and a document of a that
// names b's job does not derive its status from it.
func TestDocs_CrossTenantJob(t *testing.T) {
	t.Parallel()
	d, ctx := docsSetup(t)
	client := queue.NewClient(d, queue.ClientConfig{})
	err := d.InTenant(ctx, "a", func(tx docket.Tx) error {
		_, err := client.EnqueueTx(ctx, tx.Native(), &queue.EnqueueParams{Queue: "documents", Kind: "process", TenantID: "b"})
		return err
	})
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
		t.Fatalf("enqueue for tenant b in tenant a's transaction: %v, want 42501", err)
	}
	res, err := client.Enqueue(ctx, &queue.EnqueueParams{Queue: "documents", Kind: "process", TenantID: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Executor().JobClaim(ctx, &driver.JobClaimParams{Queue: "documents", WorkerID: "w", Max: 1, LeaseDuration: time.Hour}); err != nil {
		t.Fatal(err)
	}
	inTenant(t, d, "a", func(tx docket.Tx) error {
		return tx.DocumentInsert(ctx, &docket.Document{ID: "doc-x", JobID: res.Job.ID})
	})
	wantDocStatus(t, d, "a", "doc-x", docket.StatusPending) // recorded; b's job is running
	// A statement that writes another tenant's row is an isolation error.
	err = d.InTenant(ctx, "a", func(tx docket.Tx) error {
		_, err := tx.Native().(pgx.Tx).Exec(ctx, `INSERT INTO docket_documents (id, tenant_id) VALUES ('y', 'b')`)
		return err
	})
	if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
		t.Fatalf("insert of a row of b in a's transaction: %v, want 42501", err)
	}
}
