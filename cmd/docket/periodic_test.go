package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/sqlite"
)

// docket periodic list prints what a worker's leader recorded: the
// maintenance sweeps and a periodic job, with schedule, last and next run.
func TestRun_PeriodicList(t *testing.T) {
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
	w, err := queue.NewWorker(queue.NewClient(d, queue.ClientConfig{}), queue.WorkerConfig{
		Queues: map[string]queue.QueueConfig{"q": {MaxWorkers: 1}},
		Periodic: []queue.PeriodicJob{{Name: "nightly-report", Schedule: "* * * * * *", Params: func(time.Time) *queue.EnqueueParams {
			return &queue.EnqueueParams{Queue: "reports", Kind: "report", TenantID: "acme"}
		}}},
		Maintenance: queue.MaintenanceConfig{ElectInterval: 50 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		recs, err := d.Executor().PeriodicList(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 4 && recs[3].Runs > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no tick of the periodic job in 30 s: %+v", recs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	e := env(map[string]string{"DOCKET_DATA_DIR": dir})

	var stdout, stderr syncBuffer
	if err := run(ctx, []string{"periodic", "list"}, e, &stdout, &stderr); err != nil {
		t.Fatalf("periodic list: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	want := []string{"NAME", "docket.clean", "docket.rescue", "docket.schedule", "nightly-report"}
	if len(lines) != len(want) {
		t.Fatalf("periodic list printed:\n%s\nwant a header and 4 rows", stdout.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d %q: want it to start with %q", i, lines[i], w)
		}
	}
	for _, s := range []string{"@every 1m0s", "@every 500ms", "* * * * * *", " ago)", "(in "} {
		if !strings.Contains(stdout.String(), s) {
			t.Errorf("periodic list printed:\n%s\nwant %q in it", stdout.String(), s)
		}
	}

	var out syncBuffer
	if err := run(ctx, []string{"periodic", "list", "--json"}, e, &out, &stderr); err != nil {
		t.Fatalf("periodic list --json: %v\n%s", err, stderr.String())
	}
	var v httpapi.PeriodicListView
	if err := json.Unmarshal([]byte(out.String()), &v); err != nil {
		t.Fatalf("periodic list --json printed %s: %v", out.String(), err)
	}
	job := v.Periodic[3]
	if len(v.Periodic) != 4 || job.Name != "nightly-report" || job.LastTick == nil || job.LastRunAt == nil ||
		job.Runs < 1 || !job.NextRun.After(*job.LastTick) || job.NextRun.Sub(*job.LastTick)%time.Second != 0 {
		t.Fatalf("periodic list --json: %s", out.String())
	}
	if v.Periodic[0].Name != "docket.clean" || v.Periodic[0].Schedule != "@every 1m0s" {
		t.Fatalf("periodic list --json, first task: %+v", v.Periodic[0])
	}
}

func TestRun_PeriodicUsage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := env(map[string]string{"DOCKET_DATA_DIR": t.TempDir()})
	var stdout, stderr syncBuffer
	if err := run(ctx, []string{"periodic", "--help"}, e, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "docket periodic list") {
		t.Fatalf("periodic --help: %v, printed %q", err, stdout.String())
	}
	if err := run(ctx, []string{"periodic", "list", "-h"}, e, &stdout, &stderr); !errors.Is(err, flag.ErrHelp) || !strings.Contains(stderr.String(), "--json") {
		t.Fatalf("periodic list -h: %v, printed %q", err, stderr.String())
	}
	for _, args := range [][]string{{"periodic"}, {"periodic", "run"}} {
		if err := run(ctx, args, e, &stdout, &stderr); !errors.Is(err, errUsage) {
			t.Fatalf("%v: %v, want a usage error", args, err)
		}
	}
	var out syncBuffer
	if err := run(ctx, []string{"periodic", "list"}, e, &out, &stderr); err != nil || !strings.Contains(out.String(), "no periodic tasks yet") {
		t.Fatalf("periodic list on a new store: %v, printed %q", err, out.String())
	}
}

// docket periodic list, while an embedded serve holds the database, reads
// the tasks through that serve's admin API.
func TestRun_PeriodicThroughServe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, _, _, stop := startServe(t, dir)
	ctx := context.Background()
	e := env(map[string]string{"DOCKET_DATA_DIR": dir})
	deadline := time.Now().Add(30 * time.Second)
	for {
		var out, errOut syncBuffer
		err := run(ctx, []string{"periodic", "list", "--json"}, e, &out, &errOut)
		if err != nil {
			t.Fatalf("periodic list while serve runs: %v\n%s", err, errOut.String())
		}
		if !strings.Contains(errOut.String(), "going through its admin API") {
			t.Fatalf("periodic list did not go through serve: %s", errOut.String())
		}
		var v httpapi.PeriodicListView
		if err := json.Unmarshal([]byte(out.String()), &v); err != nil {
			t.Fatalf("periodic list --json printed %s: %v", out.String(), err)
		}
		if len(v.Periodic) == 3 && v.Periodic[1].Name == "docket.rescue" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("periodic list through serve: %s, want the three sweeps", out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	stop()
}
