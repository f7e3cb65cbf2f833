package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/sqlite"
)

// docket queue pause|resume and docket tenants pause|resume on the
// database: what they print, what the store then holds, and what they
// refuse.
func TestRun_Pause(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tenantID := createTenantCLI(t, dir, "acme")

	out, _, err := docketCmd(t, dir, "queue", "pause", "documents")
	if err != nil || out != "queue documents paused\n" {
		t.Fatalf("queue pause: %q, %v", out, err)
	}
	out, _, err = docketCmd(t, dir, "tenants", "pause", tenantID, "--json")
	var tp httpapi.TenantPauseView
	if err != nil || json.Unmarshal([]byte(out), &tp) != nil || tp != (httpapi.TenantPauseView{TenantID: tenantID, Paused: true}) {
		t.Fatalf("tenants pause --json: %q, %v", out, err)
	}
	out, _, err = docketCmd(t, dir, "queue", "health", "--json")
	var h httpapi.HealthView
	if err != nil || json.Unmarshal([]byte(out), &h) != nil || !slices.Equal(h.PausedQueues, []string{"documents"}) {
		t.Fatalf("queue health --json after pause: paused_queues %v (%v)\n%s", h.PausedQueues, err, out)
	}
	if out, _, _ := docketCmd(t, dir, "queue", "health"); !strings.Contains(out, "PAUSED QUEUES: documents") {
		t.Errorf("queue health printed:\n%s\nwant the paused queue", out)
	}
	p := storePauses(t, dir)
	if !p.QueuePaused("documents") || !p.TenantPaused(tenantID) {
		t.Fatalf("store pauses after the commands: %+v", p)
	}

	out, _, err = docketCmd(t, dir, "queue", "resume", "documents", "--json")
	var qp httpapi.QueuePauseView
	if err != nil || json.Unmarshal([]byte(out), &qp) != nil || qp != (httpapi.QueuePauseView{Queue: "documents"}) {
		t.Fatalf("queue resume --json: %q, %v", out, err)
	}
	if out, _, err := docketCmd(t, dir, "tenants", "resume", tenantID); err != nil || out != "tenant "+tenantID+" resumed\n" {
		t.Fatalf("tenants resume: %q, %v", out, err)
	}
	if p := storePauses(t, dir); len(p.Queues)+len(p.Tenants) != 0 {
		t.Fatalf("store pauses after resuming: %+v", p)
	}

	for _, args := range [][]string{
		{"queue", "pause"}, {"queue", "pause", "a", "b"}, {"tenants", "resume"},
	} {
		if _, _, err := docketCmd(t, dir, args...); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	if _, _, err := docketCmd(t, dir, "queue", "pause", "Bad!"); err == nil || !strings.Contains(err.Error(), `queue "Bad!"`) {
		t.Errorf("queue pause Bad!: %v, want the name refused", err)
	}
	if _, _, err := docketCmd(t, dir, "tenants", "pause", "nope"); err == nil || !strings.Contains(err.Error(), `no tenant "nope"`) {
		t.Errorf("tenants pause nope: %v, want an unknown tenant", err)
	}
	for _, verb := range []string{"pause", "resume"} {
		_, _, err := docketCmd(t, dir, "queue", verb, "documnets")
		if err == nil || !strings.Contains(err.Error(), `no queue "documnets"; known queues: dispatch, documents`) {
			t.Errorf("queue %s documnets: %v, want the known queues named", verb, err)
		}
	}
	if p := storePauses(t, dir); len(p.Queues) != 0 {
		t.Fatalf("store pauses after a misspelt queue: %+v", p)
	}
	for _, args := range [][]string{{"queue", "pause", "--help"}, {"tenants", "resume", "-h"}} {
		_, errOut, err := docketCmd(t, dir, args...)
		if !errors.Is(err, flag.ErrHelp) || !strings.Contains(errOut, "usage: docket") || !strings.Contains(errOut, "-server") {
			t.Errorf("%v: %v, printed %q; want the usage and flags", args, err, errOut)
		}
	}
}

// While an embedded serve runs, the pause commands go through its admin
// API, and its workers see the pause.
func TestRun_PauseWhileServing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, _, _, _ := startServe(t, dir)
	_, errOut, err := docketCmd(t, dir, "queue", "pause", "documents")
	if err != nil || !strings.Contains(errOut, "going through its admin API at "+srv.base) {
		t.Fatalf("queue pause while serving: %v\n%s", err, errOut)
	}
	out, _, err := docketCmd(t, dir, "queue", "health", "--json")
	var h httpapi.HealthView
	if err != nil || json.Unmarshal([]byte(out), &h) != nil || !slices.Contains(h.PausedQueues, "documents") {
		t.Fatalf("queue health while serving: %v, paused_queues %v", err, h.PausedQueues)
	}
	if _, _, err := docketCmd(t, dir, "tenants", "pause", "nope"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("tenants pause nope while serving: %v, want the server's 404", err)
	}
	if _, _, err := docketCmd(t, dir, "queue", "pause", "documnets"); err == nil || !strings.Contains(err.Error(), "404") ||
		!strings.Contains(err.Error(), "known queues: dispatch, documents") {
		t.Errorf("queue pause documnets while serving: %v, want the server's 404 naming the known queues", err)
	}
	if _, _, err := docketCmd(t, dir, "queue", "resume", "documents"); err != nil {
		t.Fatalf("queue resume while serving: %v", err)
	}
}

// createTenantCLI creates a tenant with the CLI and returns its id.
func createTenantCLI(t *testing.T, dir, name string) string {
	t.Helper()
	out, errOut, err := docketCmd(t, dir, "tenants", "create", "--name", name, "--json")
	var created struct {
		Tenant httpapi.TenantView `json:"tenant"`
	}
	if err != nil || json.Unmarshal([]byte(out), &created) != nil || created.Tenant.ID == "" {
		t.Fatalf("tenants create: %q, %v\n%s", out, err, errOut)
	}
	return created.Tenant.ID
}

// storePauses reads the pauses of the data dir's store.
func storePauses(t *testing.T, dir string) *queue.Pauses {
	t.Helper()
	ctx := context.Background()
	d, err := sqlite.Open(ctx, filepath.Join(dir, "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	p, err := queue.NewClient(d, queue.ClientConfig{}).Pauses(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
