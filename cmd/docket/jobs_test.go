package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/sqlite"
)

// docket jobs lists, shows, cancels and retries jobs of the store.
func TestRun_Jobs(t *testing.T) {
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
		{[]string{"jobs", "get", "1"}, "job 1  tenant acme"},
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
