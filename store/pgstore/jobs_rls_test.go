package pgstore_test

import (
	"errors"
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

// TestRLS_JobReads: the reads of a tenant's job routes, made in the
// tenant's transaction (queue.Client's ListTx and GetTx, as httpapi does),
// see only that tenant's jobs even when the query names no tenant: the
// database, not only the query, keeps tenants apart.
func TestRLS_JobReads(t *testing.T) {
	t.Parallel()
	f := setup(t)
	client := queue.NewClient(f.d.Driver, queue.ClientConfig{})
	ids := map[string]int64{}
	for _, tenant := range []string{"a", "b"} {
		if _, err := f.d.TenantCreate(f.ctx, &docket.TenantCreateParams{ID: tenant, Name: tenant, Plan: docket.PlanPro}); err != nil {
			t.Fatal(err)
		}
		res, err := client.Enqueue(f.ctx, &queue.EnqueueParams{Queue: "documents", Kind: "k", TenantID: tenant})
		if err != nil {
			t.Fatal(err)
		}
		ids[tenant] = res.Job.ID
	}
	err := f.d.ReadTenant(f.ctx, "a", func(tx docket.Tx) error {
		jobs, err := client.ListTx(f.ctx, tx.Native(), &queue.JobListParams{}) // no tenant filter
		if err != nil {
			return err
		}
		if len(jobs) != 1 || jobs[0].TenantID != "a" {
			t.Errorf("tenant a lists %d jobs: %+v; want its one", len(jobs), jobs)
		}
		if _, err := client.GetTx(f.ctx, tx.Native(), ids["b"]); !errors.Is(err, queue.ErrNotFound) {
			t.Errorf("tenant a reads tenant b's job: %v; want not found", err)
		}
		j, err := client.GetTx(f.ctx, tx.Native(), ids["a"])
		if err != nil || j.TenantID != "a" {
			t.Errorf("tenant a reads its job: %+v, %v", j, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
