package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/sqlite"
)

// docket queue health prints the monitoring views of the store, as tables
// and, with --json, as GET /v1/admin/health answers.
func TestRun_QueueHealth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	d, err := sqlite.Open(ctx, filepath.Join(dir, "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	c := queue.NewClient(d, queue.ClientConfig{})
	for _, tenant := range []string{"acme", "acme", "globex"} {
		if _, err := c.Enqueue(ctx, &queue.EnqueueParams{Queue: "q", Kind: "k", TenantID: tenant, MaxAttempts: 1}); err != nil {
			t.Fatal(err)
		}
	}
	jobs, _, err := d.Executor().JobClaim(ctx, &driver.JobClaimParams{Queue: "q", WorkerID: "w", Max: 1, LeaseDuration: time.Hour})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %v %v", jobs, err)
	}
	if _, err := d.Executor().JobFinish(ctx, []*driver.JobFinishParams{{Lease: jobs[0].Lease(), Outcome: queue.OutcomeFailed, Error: "bad input"}}); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	e := env(map[string]string{"DOCKET_DATA_DIR": dir})

	var stdout, stderr syncBuffer
	if err := run(ctx, []string{"queue", "health"}, e, &stdout, &stderr); err != nil {
		t.Fatalf("queue health: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{"QUEUE", "pending", "failed", "FAILED JOBS: 1", "bad input", "BACKLOG: 2"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("queue health printed:\n%s\nwant %q in it", stdout.String(), want)
		}
	}

	var out syncBuffer
	if err := run(ctx, []string{"queue", "health", "--json", "--queue", "q", "--limit", "1"}, e, &out, &stderr); err != nil {
		t.Fatalf("queue health --json: %v\n%s", err, stderr.String())
	}
	var v httpapi.HealthView
	if err := json.Unmarshal([]byte(out.String()), &v); err != nil {
		t.Fatalf("queue health --json printed %q: %v", out.String(), err)
	}
	if v.Queue != "q" || v.FailedJobs.Total != 1 || v.QueueDepth.Total != 2 || len(v.QueueDepth.Tenants) != 1 {
		t.Errorf("queue health --json = %+v, want queue q, 1 failed, 1 row of 2 tenants with work", v)
	}
	if err := run(ctx, []string{"queue", "health", "--limit", "0"}, e, &stdout, &stderr); err == nil {
		t.Error("queue health --limit 0 succeeded")
	}
}
