package pgstore_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
	"github.com/docketq/docket/store/pgstore"
)

// TestRLS_NonSuperuserOwner: with an owner that is no superuser (so
// forced RLS applies to it), migrating works, the engine still sees every
// tenant's jobs through the owner policy, and tenant transactions work.
func TestRLS_NonSuperuserOwner(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	connString := pgtest.NewEmptyDatabase(t)
	admin, err := pgx.Connect(ctx, connString)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	_, err = admin.Exec(ctx, `DO $$
BEGIN
    CREATE ROLE docket_test_owner LOGIN NOSUPERUSER CREATEROLE;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = admin.Exec(ctx, `DO $$ BEGIN
    EXECUTE format('ALTER DATABASE %I OWNER TO docket_test_owner', current_database());
END $$`)
	if err != nil {
		t.Fatal(err)
	}
	drv, err := postgres.Open(ctx, connString+" user=docket_test_owner")
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close()
	d := &testStore{Store: pgstore.New(drv), Driver: drv}
	if err := d.Migrate(ctx); err != nil {
		t.Fatalf("migrate as a non-superuser owner: %v", err)
	}
	var super bool
	if err := d.Pool().QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&super); err != nil || super {
		t.Fatalf("owner is superuser %v (%v); the test needs one that is not", super, err)
	}
	client := queue.NewClient(d, queue.ClientConfig{})
	for _, tenant := range []string{"a", "b"} {
		inTenantOf(t, d, tenant, func(tx docket.Tx) error {
			_, err := client.EnqueueTx(ctx, tx.Native(), &queue.EnqueueParams{Queue: "documents", Kind: "k", TenantID: tenant})
			return err
		})
	}
	jobs, _, err := d.Executor().JobClaim(ctx, &driver.JobClaimParams{Queue: "documents", WorkerID: "w", Max: 10, LeaseDuration: time.Hour})
	if err != nil || len(jobs) != 2 {
		t.Fatalf("the owner claimed %d jobs (%v), want both tenants'", len(jobs), err)
	}
	var seen int
	err = d.ReadTenant(ctx, "a", func(tx docket.Tx) error {
		return tx.Native().(pgx.Tx).QueryRow(ctx, `SELECT count(*) FROM docket_jobs`).Scan(&seen)
	})
	if err != nil || seen != 1 {
		t.Fatalf("tenant a sees %d jobs (%v), want 1", seen, err)
	}
}

// inTenantOf is inTenant for a driver of another database.
func inTenantOf(t *testing.T, d *testStore, tenant string, fn func(tx docket.Tx) error) {
	t.Helper()
	if err := d.InTenant(t.Context(), tenant, fn); err != nil {
		t.Fatalf("InTenant(%s): %v", tenant, err)
	}
}
