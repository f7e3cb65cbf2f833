package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/docketq/docket/internal/loadgen"
)

// docket load drives a real docket serve (embedded store, its own workers)
// through HTTP as several tenants, one of them a flood: every upload is
// accepted, every job completes, each tenant's figures add up, and the
// report says which tenant flooded.
func TestLoad_AgainstServe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, _, _, stop := startServe(t, dir)
	ctx := context.Background()

	var out, errOut bytes.Buffer
	err := run(ctx, []string{"load", "--data-dir", dir, "--tenants", "4", "--documents", "24", "--flood-percent", "50",
		"--size-kib", "4", "--concurrency", "4", "--json"}, env(nil), &out, &errOut)
	if err != nil {
		t.Fatalf("docket load: %v\n%s", err, errOut.String())
	}
	var rep loadgen.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, out.String())
	}
	t.Logf("%s", out.String())
	if rep.Accepted != 24 || rep.Errors != 0 || rep.Completed != 24 || rep.Failed != 0 || rep.Unfinished != 0 {
		t.Errorf("accepted %d, errors %d, completed %d, failed %d, unfinished %d; want 24 accepted and completed",
			rep.Accepted, rep.Errors, rep.Completed, rep.Failed, rep.Unfinished)
	}
	if len(rep.PerTenant) != 4 || !rep.PerTenant[0].Flood || rep.PerTenant[0].Documents != 12 {
		t.Fatalf("per tenant %+v: want 4 tenants, the first a flood of 12", rep.PerTenant)
	}
	sum := 0
	for _, tr := range rep.PerTenant {
		sum += tr.Completed
		if tr.Completed != tr.Documents || tr.Completion.N != tr.Completed || tr.Completion.Max <= 0 || tr.Rate <= 0 {
			t.Errorf("tenant %+v: want every document completed with a latency and a rate", tr)
		}
	}
	if sum != 24 || rep.UploadsPerSecond <= 0 || rep.Accept.N != 24 || rep.Fairness <= 0 || rep.Fairness > 1 {
		t.Errorf("completed %d, %.1f uploads/s, %d 202 latencies, fairness %.3f", sum, rep.UploadsPerSecond, rep.Accept.N, rep.Fairness)
	}
	stop()
}
