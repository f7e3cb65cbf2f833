package main

import (
	"strings"
	"testing"

	"github.com/docketq/docket/httpapi"
)

// While an embedded serve runs, docket jobs list, cancel, retry and
// discard go through its admin API, as on the database.
func TestRun_JobsWhileServing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, _, _, _ := startServe(t, dir)
	if _, errOut, err := docketCmd(t, dir, "queue", "pause", "documents"); err != nil {
		t.Fatalf("queue pause: %v\n%s", err, errOut)
	}
	first, second := upload(t, srv, "a.txt", []byte("a")), upload(t, srv, "b.txt", []byte("b"))
	list := func(args ...string) []httpapi.JobView {
		t.Helper()
		out, errOut, err := docketCmd(t, dir, append([]string{"jobs", "list", "--json"}, args...)...)
		if err != nil || !strings.Contains(errOut, "going through its admin API at "+srv.base) {
			t.Fatalf("jobs list %v while serving: %v\n%s", args, err, errOut)
		}
		var v struct{ Jobs []httpapi.JobView }
		decodeCLI(t, "jobs list --json", out, &v)
		return v.Jobs
	}
	if jobs := list("--status", "pending"); len(jobs) != 2 || jobs[0].ID != second || jobs[1].ID != first {
		t.Fatalf("pending jobs: %+v, want %s then %s", jobs, second, first)
	}
	job := func(args ...string) httpapi.JobView {
		t.Helper()
		out, errOut, err := docketCmd(t, dir, append([]string{"jobs"}, append(args, "--json")...)...)
		if err != nil {
			t.Fatalf("jobs %v while serving: %v\n%s", args, err, errOut)
		}
		var v struct{ Job httpapi.JobView }
		decodeCLI(t, "jobs --json", out, &v)
		return v.Job
	}
	if j := job("cancel", first); j.ID != first || j.Status != "cancelled" {
		t.Errorf("jobs cancel %s: %+v", first, j)
	}
	retried := job("retry", first)
	if retried.ID == first || retried.Status != "pending" {
		t.Errorf("jobs retry %s: %+v, want a new pending job", first, retried)
	}
	if j := job("discard", second, "--reason", "poisoned"); j.Status != "failed" || j.ErrorMessage == nil || *j.ErrorMessage != "poisoned" {
		t.Errorf("jobs discard %s: %+v, want failed, poisoned", second, j)
	}
	if out, _, err := docketCmd(t, dir, "jobs", "cancel", second); err == nil {
		t.Errorf("jobs cancel of a failed job: %q, want it refused", out)
	}
	if jobs := list("--tenant", retried.TenantID); len(jobs) != 3 {
		t.Errorf("the tenant's jobs: %d, want 3", len(jobs))
	}
}
