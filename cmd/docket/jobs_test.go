package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/sqlite"
)

// docket jobs lists, shows, cancels and retries jobs of the store.
func TestRun_Jobs(t *testing.T) {
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
	if _, err := c.Enqueue(ctx, &queue.EnqueueParams{Kind: "k", TenantID: "acme"}); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	e := env(map[string]string{"DOCKET_DATA_DIR": dir})
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"jobs", "list"}, "acme"},
		{[]string{"jobs", "list", "--status", "pending", "--tenant", "acme"}, "pending"},
		{[]string{"jobs", "get", "1"}, "tenant     acme"},
		{[]string{"jobs", "cancel", "1"}, "job 1: cancelled"},
		{[]string{"jobs", "retry", "1"}, "job 2: pending"},
		{[]string{"jobs", "discard", "2", "--reason", "poison"}, "job 2: failed"},
		{[]string{"jobs", "get", "2", "--json"}, `"attempts"`},
	}
	for _, s := range steps {
		var stdout, stderr syncBuffer
		if err := run(ctx, s.args, e, &stdout, &stderr); err != nil {
			t.Fatalf("%v: %v\n%s", s.args, err, stderr.String())
		}
		if !strings.Contains(stdout.String(), s.want) {
			t.Errorf("%v printed %q, want %q in it", s.args, stdout.String(), s.want)
		}
	}
	var stdout, stderr syncBuffer
	if err := run(ctx, []string{"jobs", "cancel", "2"}, e, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "conflict") {
		t.Errorf("cancel of a finished job: %v", err)
	}
	if err := run(ctx, []string{"jobs", "get", "nope"}, e, &stdout, &stderr); err == nil {
		t.Error("jobs get nope succeeded")
	}
}

// docket jobs show prints a job's fields and its attempt history, as a
// table and, with --json, as GET /v1/admin/jobs/{id} answers.
func TestRun_JobsShow(t *testing.T) {
	t.Parallel()
	f := newCLIFixture(t)
	code, out, errOut := runCLI(t, f.dir, "jobs", "show", "1")
	if code != 0 {
		t.Fatalf("jobs show 1: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"job        1", "status     failed", "attempt    2/2", "error      second try failed",
		"ATTEMPT  WORKER", "w-retry", "retry    first try failed", "w-failed", "failed   second try failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("jobs show printed:\n%s\nwant %q in it", out, want)
		}
	}
	_, out, _ = runCLI(t, f.dir, "jobs", "show", "--json", "1")
	var v httpapi.JobDetailView
	decodeCLI(t, "jobs show --json", out, &v)
	if v.Job.ID != "1" || v.Job.Status != "failed" || v.Job.TenantID != f.tenantID || len(v.Attempts) != 2 {
		t.Fatalf("jobs show --json: %+v", v)
	}
	for i, want := range []struct{ outcome, worker, err string }{{"retry", "w-retry", "first try failed"}, {"failed", "w-failed", "second try failed"}} {
		a := v.Attempts[i]
		if a.Attempt != i+1 || a.Outcome != want.outcome || a.WorkerID != want.worker || a.Error != want.err ||
			a.StartedAt == nil || a.EndedAt == nil || a.EndedAt.Before(*a.StartedAt) {
			t.Errorf("attempt %d: %+v, want %+v", i+1, a, want)
		}
	}
	if _, out, _ = runCLI(t, f.dir, "jobs", "show", "2"); !strings.Contains(out, "no attempts yet") {
		t.Errorf("jobs show of a pending job:\n%s", out)
	}
	for _, bad := range [][]string{{"jobs", "show"}, {"jobs", "show", "x"}, {"jobs", "show", "0"}, {"jobs", "show", "99"}, {"jobs", "show", "1", "2"}} {
		if code, _, _ := runCLI(t, f.dir, bad...); code != 1 {
			t.Errorf("%q: exit %d, want 1", bad, code)
		}
	}
}
