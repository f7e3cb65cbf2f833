package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/internal/storepair"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/sqlite"
)

// decodeCLI decodes a command's --json output into v.
func decodeCLI(t *testing.T, what, out string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("%s printed %q: %v", what, out, err)
	}
}

// docket tenants update, show, revoke-key and list on the database.
func TestRun_TenantsOnStore(t *testing.T) {
	t.Parallel()
	f := newCLIFixture(t)
	ctx := context.Background()

	code, out, errOut := runCLI(t, f.dir, "tenants", "update", f.tenantID, "--concurrency", "4", "--rate-limit", "30", "--json")
	var updated struct {
		Tenant httpapi.TenantView `json:"tenant"`
	}
	if code != 0 {
		t.Fatalf("tenants update: exit %d: %s", code, errOut)
	}
	decodeCLI(t, "tenants update --json", out, &updated)
	if tv := updated.Tenant; tv.ID != f.tenantID || tv.Concurrency != 4 || tv.RateLimit != 30 || tv.UploadsPerHour != 30 || tv.Plan != "free" || tv.Name != "acme" {
		t.Errorf("updated tenant %+v, want concurrency 4, rate limit 30, the rest as it was", tv)
	}
	// A variable's default changes nothing: only the flags given do.
	var stdout, stderr syncBuffer
	vars := env(map[string]string{"DOCKET_DATA_DIR": f.dir, "DOCKET_TENANT_PLAN": "enterprise"})
	if err := run(ctx, []string{"tenants", "update", "--tenant", f.tenantID, "--name", "Acme Inc"}, vars, &stdout, &stderr); err != nil {
		t.Fatalf("tenants update --name: %v: %s", err, stderr.String())
	}

	dRaw, err := sqlite.Open(ctx, filepath.Join(f.dir, "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	d := storepair.NewSQLite(dRaw)
	tn, err := d.TenantGet(ctx, f.tenantID)
	if err != nil || tn.Name != "Acme Inc" || tn.Plan != docket.PlanFree || tn.Concurrency != 4 {
		t.Errorf("stored tenant %+v (%v), want Acme Inc, free plan (the variable ignored), concurrency 4", tn, err)
	}
	res, err := queue.NewClient(d, queue.ClientConfig{}).Enqueue(ctx, &queue.EnqueueParams{Queue: docket.DocumentQueue, Kind: "k", TenantID: f.tenantID})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := d.Executor().JobPosition(ctx, res.Job.ID); err != nil || p.Limit != 4 {
		t.Errorf("the tenant's queue limit after update: %+v (%v), want 4", p, err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	if code, out, errOut := runCLI(t, f.dir, "tenants", "revoke-key", f.tenantID, f.keyID); code != 0 || out != "key "+f.keyID+" revoked\n" {
		t.Errorf("tenants revoke-key TENANT KEY: exit %d: %s%s", code, out, errOut)
	}
	_, out, _ = runCLI(t, f.dir, "tenants", "show", f.tenantID, "--json")
	var shown tenantDetail
	decodeCLI(t, "tenants show --json", out, &shown)
	if len(shown.Keys) != 1 || shown.Keys[0].ID != f.keyID || shown.Keys[0].RevokedAt == nil || shown.Tenant.Name != "Acme Inc" {
		t.Errorf("tenants show after revoke: %+v", shown)
	}
	if _, out, _ = runCLI(t, f.dir, "tenants", "show", f.tenantID); !strings.Contains(out, f.keyID) || !strings.Contains(out, "REVOKED") {
		t.Errorf("tenants show printed:\n%s", out)
	}

	for _, name := range []string{"b", "c"} {
		if code, _, errOut := runCLI(t, f.dir, "tenants", "create", "--name", name); code != 0 {
			t.Fatalf("tenants create: %s", errOut)
		}
	}
	code, out, errOut = runCLI(t, f.dir, "tenants", "list", "--page-size", "1", "--json")
	if code != 0 {
		t.Fatalf("tenants list: exit %d: %s", code, errOut)
	}
	checkTenantNames(t, out, "Acme Inc", "b", "c")

	for _, bad := range [][]string{
		{"tenants", "update", f.tenantID},                   // nothing to change
		{"tenants", "update", f.tenantID, "--plan", "gold"}, // no such plan
		{"tenants", "update", f.tenantID, "--concurrency", "0"},
		{"tenants", "update", "t_nobody", "--plan", "pro"},   // unknown tenant
		{"tenants", "revoke-key", f.tenantID},                // no key
		{"tenants", "show", f.tenantID, "extra"},             // too many arguments
		{"tenants", "show", f.tenantID, "--tenant", "other"}, // two ids
		{"tenants", "list", "--page-size", "501"},
	} {
		if code, _, _ := runCLI(t, f.dir, bad...); code != 1 {
			t.Errorf("%q: exit %d, want 1", bad, code)
		}
	}
}

// checkTenantNames checks `tenants list --json` printed these tenants, in
// this order.
func checkTenantNames(t *testing.T, out string, names ...string) {
	t.Helper()
	var list struct {
		Tenants []httpapi.TenantView `json:"tenants"`
	}
	decodeCLI(t, "tenants list --json", out, &list)
	var got []string
	for _, tv := range list.Tenants {
		got = append(got, tv.Name)
	}
	if fmt.Sprint(got) != fmt.Sprint(names) {
		t.Errorf("tenants list: %q, want %q", got, names)
	}
}

// While an embedded serve runs, tenants update, show, revoke-key and list
// (following next_cursor) and jobs show go through its admin API.
func TestServe_CLIThroughAdminAPI(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	srv, _, _, _ := startServe(t, dataDir)
	jobID := upload(t, srv, "note.txt", []byte("a note"))
	for _, name := range []string{"b", "c"} {
		if _, errOut, err := docketCmd(t, dataDir, "tenants", "create", "--name", name, "--weight", "5"); err != nil {
			t.Fatalf("tenants create: %v: %s", err, errOut)
		}
	}
	out, errOut, err := docketCmd(t, dataDir, "tenants", "list", "--page-size", "1", "--json")
	if err != nil || !strings.Contains(errOut, "going through its admin API") {
		t.Fatalf("tenants list while serving: %v: %s", err, errOut)
	}
	checkTenantNames(t, out, "default", "b", "c")
	var list struct {
		Tenants []httpapi.TenantView `json:"tenants"`
	}
	decodeCLI(t, "tenants list", out, &list)
	id := list.Tenants[1].ID

	out, errOut, err = docketCmd(t, dataDir, "tenants", "update", id, "--plan", "starter", "--json")
	var updated struct {
		Tenant httpapi.TenantView `json:"tenant"`
	}
	if err != nil {
		t.Fatalf("tenants update while serving: %v: %s", err, errOut)
	}
	decodeCLI(t, "tenants update", out, &updated)
	if tv := updated.Tenant; tv.Plan != "starter" || tv.Name != "b" || tv.Weight != 5 || tv.EffectiveWeight != 5 {
		t.Errorf("updated through the admin API: %+v, want plan starter, name b, weight 5 (created with it)", tv)
	}
	out, errOut, err = docketCmd(t, dataDir, "tenants", "update", id, "--weight", "0", "--json")
	if err != nil {
		t.Fatalf("tenants update --weight 0 while serving: %v: %s", err, errOut)
	}
	decodeCLI(t, "tenants update --weight 0", out, &updated)
	if tv := updated.Tenant; tv.Weight != 0 || tv.EffectiveWeight != docket.PlanStarter.Weight() {
		t.Errorf("--weight 0 through the admin API: %+v, want weight 0, the starter plan's", tv)
	}
	out, _, err = docketCmd(t, dataDir, "tenants", "show", id, "--json")
	var shown tenantDetail
	if err != nil {
		t.Fatal(err)
	}
	decodeCLI(t, "tenants show", out, &shown)
	if shown.Tenant.Plan != "starter" || len(shown.Keys) != 1 {
		t.Fatalf("tenants show while serving: %+v", shown)
	}
	out, _, err = docketCmd(t, dataDir, "tenants", "revoke-key", id, shown.Keys[0].ID, "--json")
	var revoked struct {
		Key httpapi.APIKeyView `json:"key"`
	}
	if err != nil {
		t.Fatal(err)
	}
	decodeCLI(t, "tenants revoke-key", out, &revoked)
	if revoked.Key.ID != shown.Keys[0].ID || revoked.Key.RevokedAt == nil {
		t.Errorf("revoke-key --json: %+v", revoked.Key)
	}

	out, errOut, err = docketCmd(t, dataDir, "jobs", "show", jobID, "--json")
	if err != nil || !strings.Contains(errOut, "going through its admin API") {
		t.Fatalf("jobs show while serving: %v: %s", err, errOut)
	}
	var detail httpapi.JobDetailView
	decodeCLI(t, "jobs show", out, &detail)
	if detail.Job.ID != jobID || detail.Attempts == nil {
		t.Errorf("jobs show while serving: %+v", detail)
	}
	if _, _, err := docketCmd(t, dataDir, "jobs", "show", "999999"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("jobs show of an unknown job while serving: %v", err)
	}
}

// docket tenants create and update --weight, on the database: the
// tenant's weight overrides its plan's in the queue, a plan change keeps
// it, and --weight 0 falls back to the plan's.
func TestRun_TenantsWeight(t *testing.T) {
	t.Parallel()
	f := newCLIFixture(t)
	type tenantOut struct {
		Tenant httpapi.TenantView `json:"tenant"`
	}
	cli := func(args ...string) httpapi.TenantView {
		t.Helper()
		code, out, errOut := runCLI(t, f.dir, append(args, "--json")...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, errOut)
		}
		var got tenantOut
		decodeCLI(t, strings.Join(args, " "), out, &got)
		return got.Tenant
	}
	check := func(what string, tv httpapi.TenantView, weight, effective int) {
		t.Helper()
		if tv.Weight != weight || tv.EffectiveWeight != effective {
			t.Errorf("%s: weight %d, effective_weight %d; want %d, %d", what, tv.Weight, tv.EffectiveWeight, weight, effective)
		}
		if got := queueWeightOf(t, f.dir, tv.ID); got != effective {
			t.Errorf("%s: the queue's weight %d, want %d", what, got, effective)
		}
	}

	created := cli("tenants", "create", "--name", "heavy", "--plan", "pro", "--weight", "6")
	check("create --weight 6", created, 6, 6)
	check("update --plan enterprise", cli("tenants", "update", created.ID, "--plan", "enterprise"), 6, 6)
	check("update --weight 0", cli("tenants", "update", created.ID, "--weight", "0"), 0, docket.PlanEnterprise.Weight())
	check("update --weight 2", cli("tenants", "update", "heavy", "--weight", "2"), 2, 2)
	check("update --name", cli("tenants", "update", created.ID, "--name", "Heavy"), 2, 2)
	check("the fixture's tenant", cli("tenants", "show", f.tenantID), 0, docket.PlanFree.Weight())

	for _, bad := range [][]string{
		{"tenants", "update", created.ID, "--weight", "-1"},
		{"tenants", "update", created.ID, "--weight", "1001"},
		{"tenants", "create", "--name", "x", "--weight", "-1"},
		{"tenants", "create", "--name", "y", "--weight", "1001"},
	} {
		if code, _, _ := runCLI(t, f.dir, bad...); code != 1 {
			t.Errorf("%q: exit %d, want 1", bad, code)
		}
	}
	check("after refused commands", cli("tenants", "show", created.ID), 2, 2)
	if _, out, _ := runCLI(t, f.dir, "tenants", "show", created.ID); !strings.Contains(out, "WEIGHT") || !strings.Contains(out, "  2\n") {
		t.Errorf("tenants show printed:\n%s\nwant a WEIGHT column of 2", out)
	}

	// Through a server, --weight 0 is sent: it clears the override.
	c := tenantsCmd{weight: 0, set: map[string]bool{"weight": true}}
	if body, err := json.Marshal(c.patch()); err != nil || string(body) != `{"weight":0}` {
		t.Errorf("the PATCH body of --weight 0: %s (%v), want {\"weight\":0}", body, err)
	}
}

// queueWeightOf is the weight queue.Client.SetTenantWeight last set for a
// tenant in the data dir's database; 1, the default, when none is set.
func queueWeightOf(t *testing.T, dir, tenantID string) int {
	t.Helper()
	d, err := sqlite.Open(context.Background(), filepath.Join(dir, "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var w int
	err = d.DB().QueryRowContext(context.Background(),
		`SELECT coalesce((SELECT weight FROM docket_tenant_weights WHERE tenant_id = ?), 1)`, tenantID).Scan(&w)
	if err != nil {
		t.Fatalf("weight of tenant %s: %v", tenantID, err)
	}
	return w
}
