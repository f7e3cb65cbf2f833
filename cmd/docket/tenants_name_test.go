package main

import (
	"strings"
	"testing"
)

// checkTenantsByName runs the tenants commands with a tenant's name where
// they take an id: each acts on the tenant of that name, while a name that
// is another tenant's id still means that tenant (an id wins).
func checkTenantsByName(t *testing.T, dir string) {
	t.Helper()
	acme := createTenantCLI(t, dir, "acme")
	other := createTenantCLI(t, dir, acme) // named as acme's id
	show := func(ref string) tenantDetail {
		t.Helper()
		out, errOut, err := docketCmd(t, dir, "tenants", "show", ref, "--json")
		if err != nil {
			t.Fatalf("tenants show %s: %v\n%s", ref, err, errOut)
		}
		var d tenantDetail
		decodeCLI(t, "tenants show --json", out, &d)
		return d
	}
	if d := show("acme"); d.Tenant.ID != acme {
		t.Errorf("tenants show acme: tenant %s, want %s", d.Tenant.ID, acme)
	}
	if d := show(acme); d.Tenant.ID != acme {
		t.Errorf("tenants show %s (an id and another's name): tenant %s, want the id's", acme, d.Tenant.ID)
	}
	if _, errOut, err := docketCmd(t, dir, "tenants", "update", "acme", "--plan", "pro"); err != nil {
		t.Fatalf("tenants update acme: %v\n%s", err, errOut)
	}
	if d := show(acme); d.Tenant.Plan != "pro" {
		t.Errorf("after tenants update acme: plan %s, want pro", d.Tenant.Plan)
	}
	if _, errOut, err := docketCmd(t, dir, "tenants", "key", "--tenant", "acme", "--key-name", "second"); err != nil {
		t.Fatalf("tenants key acme: %v\n%s", err, errOut)
	}
	d := show(acme)
	if len(d.Keys) != 2 {
		t.Fatalf("after tenants key acme: %d keys, want 2", len(d.Keys))
	}
	if _, errOut, err := docketCmd(t, dir, "tenants", "revoke-key", "acme", d.Keys[0].ID); err != nil {
		t.Errorf("tenants revoke-key acme: %v\n%s", err, errOut)
	}
	for _, verb := range []string{"pause", "resume"} {
		if out, errOut, err := docketCmd(t, dir, "tenants", verb, "acme"); err != nil || out != "tenant "+acme+" "+verb+"d\n" {
			t.Errorf("tenants %s acme: %q, %v\n%s", verb, out, err, errOut)
		}
	}
	if out, errOut, err := docketCmd(t, dir, "tenants", "delete", "acme"); err != nil || !strings.HasPrefix(out, "tenant "+acme+" deleted") {
		t.Fatalf("tenants delete acme: %q, %v\n%s", out, err, errOut)
	}
	// acme's id names no tenant now but is still other's name.
	if d := show(acme); d.Tenant.ID != other {
		t.Errorf("tenants show %s after deleting acme: tenant %s, want %s (by name)", acme, d.Tenant.ID, other)
	}
	if _, _, err := docketCmd(t, dir, "tenants", "show", "nobody"); err == nil {
		t.Error("tenants show nobody: no error")
	}
	if _, _, err := docketCmd(t, dir, "tenants", "pause", "nobody"); err == nil || !strings.Contains(err.Error(), "nobody") {
		t.Errorf("tenants pause nobody: %v, want it refused", err)
	}
}

// The tenants commands take a tenant's name on the database.
func TestRun_TenantsByName(t *testing.T) {
	t.Parallel()
	checkTenantsByName(t, t.TempDir())
}

// And through a running embedded serve's admin API.
func TestRun_TenantsByNameWhileServing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	startServe(t, dir)
	checkTenantsByName(t, dir)
}
