package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/httpapi"
)

// tenantPatch is the body of PATCH /v1/admin/tenants/{id}: the settings to
// change, the others nil.
type tenantPatch struct {
	Name        *string `json:"name,omitempty"`
	Plan        *string `json:"plan,omitempty"`
	Concurrency *int    `json:"concurrency,omitempty"`
	RateLimit   *int    `json:"rate_limit,omitempty"`
	Weight      *int    `json:"weight,omitempty"`
}

// tenantDetail is what GET /v1/admin/tenants/{id} answers.
type tenantDetail struct {
	Tenant httpapi.TenantView   `json:"tenant"`
	Keys   []httpapi.APIKeyView `json:"keys"`
}

// checkUpdate refuses an update that changes nothing or sets a value the
// store would refuse.
func (c *tenantsCmd) checkUpdate() error {
	if !c.set["name"] && !c.set["plan"] && !c.set["concurrency"] && !c.set["rate-limit"] && !c.set["weight"] {
		return errors.New("tenants update: nothing to change: give --name, --plan, --concurrency, --rate-limit or --weight")
	}
	if c.set["plan"] {
		if _, err := docket.ParsePlan(c.plan); err != nil {
			return fmt.Errorf("tenants update: %w", err)
		}
	}
	if c.set["concurrency"] && c.concurrency < 1 {
		return fmt.Errorf("tenants update: --concurrency %d: want at least 1", c.concurrency)
	}
	if c.set["rate-limit"] && c.rateLimit < 0 {
		return fmt.Errorf("tenants update: --rate-limit %d: want 0 (the plan's) or more", c.rateLimit)
	}
	if c.set["weight"] && (c.weight < 0 || c.weight > docket.MaxTenantWeight) {
		return fmt.Errorf("tenants update: --weight %d: want 0 (the plan's) to %d", c.weight, docket.MaxTenantWeight)
	}
	return nil
}

// patch is the update the command line asks for: only the flags given on
// it (an environment variable's default changes nothing).
func (c *tenantsCmd) patch() *tenantPatch {
	var p tenantPatch
	if c.set["name"] {
		p.Name = &c.name
	}
	if c.set["plan"] {
		plan, _ := docket.ParsePlan(c.plan)
		s := string(plan)
		p.Plan = &s
	}
	if c.set["concurrency"] {
		p.Concurrency = &c.concurrency
	}
	if c.set["rate-limit"] {
		p.RateLimit = &c.rateLimit
	}
	if c.set["weight"] {
		p.Weight = &c.weight
	}
	return &p
}

func (c *tenantsCmd) update(ctx context.Context, admin tenantAdmin, stdout io.Writer) error {
	t, err := admin.update(ctx, c.tenantID, c.patch())
	if err != nil {
		return err
	}
	if c.asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"tenant": t})
	}
	return printTenants(stdout, []httpapi.TenantView{*t})
}

func (c *tenantsCmd) show(ctx context.Context, admin tenantAdmin, stdout io.Writer) error {
	d, err := admin.get(ctx, c.tenantID)
	if err != nil {
		return err
	}
	if c.asJSON {
		return json.NewEncoder(stdout).Encode(d)
	}
	if err := printTenants(stdout, []httpapi.TenantView{d.Tenant}); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY ID\tNAME\tCREATED\tEXPIRES\tREVOKED")
	for _, k := range d.Keys {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, k.CreatedAt.Format(time.RFC3339), timeOrDash(k.ExpiresAt), timeOrDash(k.RevokedAt))
	}
	return tw.Flush()
}

func (c *tenantsCmd) revokeKey(ctx context.Context, admin tenantAdmin, stdout io.Writer) error {
	if err := admin.revokeKey(ctx, c.tenantID, c.keyID); err != nil {
		return err
	}
	if !c.asJSON {
		fmt.Fprintf(stdout, "key %s revoked\n", c.keyID)
		return nil
	}
	d, err := admin.get(ctx, c.tenantID)
	if err != nil {
		return err
	}
	for _, k := range d.Keys {
		if k.ID == c.keyID {
			return json.NewEncoder(stdout).Encode(map[string]any{"key": k})
		}
	}
	return fmt.Errorf("key %s: revoked, but not among the tenant's keys", c.keyID)
}

func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.RFC3339)
}
