package storetest

import (
	"fmt"
	"strings"
	"time"

	"github.com/docketq/docket"
)

func tenantChecks() []docCheck {
	return []docCheck{
		{"CreateGet", checkTenantCreateGet},
		{"CreateDefaults", checkTenantDefaults},
		{"CreateDuplicate", checkTenantDuplicate},
		{"CreateInvalid", checkTenantInvalid},
		{"Rules", checkTenantRules},
		{"GetUnknown", func(f *docFixture) {
			_, err := f.s.TenantGet(f.ctx, "t_nobody")
			dWantErr(f.t, "TenantGet(unknown)", err, docket.ErrNotFound)
		}},
		{"ListOldestFirst", checkTenantList},
		{"ListPaged", checkTenantListPaged},
		{"Update", checkTenantUpdate},
		{"UpdateErrors", checkTenantUpdateErrors},
		{"Weight", checkTenantWeight},
	}
}

func checkTenantCreateGet(f *docFixture) {
	before := time.Now()
	created, err := f.s.TenantCreate(f.ctx, &docket.TenantCreateParams{
		ID: "t_acme-1", Name: "Acme", Plan: docket.PlanPro, Concurrency: 3, RateLimit: 7, Weight: 5,
	})
	if err != nil {
		f.t.Fatalf("TenantCreate: %v", err)
	}
	got, err := f.s.TenantGet(f.ctx, "t_acme-1")
	if err != nil {
		f.t.Fatalf("TenantGet: %v", err)
	}
	for _, tn := range []*docket.Tenant{created, got} {
		if tn.ID != "t_acme-1" || tn.Name != "Acme" || tn.Plan != docket.PlanPro || tn.Concurrency != 3 || tn.RateLimit != 7 || tn.Weight != 5 {
			f.t.Fatalf("tenant %+v, want id t_acme-1, name Acme, plan pro, concurrency 3, rate limit 7, weight 5", tn)
		}
		dNear(f.t, "CreatedAt", tn.CreatedAt, before)
		dNear(f.t, "UpdatedAt", tn.UpdatedAt, before)
		if tn.UploadsPerHour() != 7 {
			f.t.Fatalf("UploadsPerHour %d, want 7", tn.UploadsPerHour())
		}
		if tn.EffectiveWeight() != 5 {
			f.t.Fatalf("EffectiveWeight %d, want 5", tn.EffectiveWeight())
		}
	}
}

func checkTenantDefaults(f *docFixture) {
	tn := f.tenant("defaults")
	got, err := f.s.TenantGet(f.ctx, tn.ID)
	if err != nil {
		f.t.Fatalf("TenantGet: %v", err)
	}
	for _, x := range []*docket.Tenant{tn, got} {
		if x.Concurrency != docket.DefaultConcurrency {
			f.t.Fatalf("Concurrency %d, want DefaultConcurrency %d", x.Concurrency, docket.DefaultConcurrency)
		}
		if x.UploadsPerHour() != docket.PlanFree.UploadsPerHour() {
			f.t.Fatalf("UploadsPerHour %d (RateLimit %d), want the free plan's %d",
				x.UploadsPerHour(), x.RateLimit, docket.PlanFree.UploadsPerHour())
		}
		if x.Weight != 0 || x.EffectiveWeight() != docket.PlanFree.Weight() {
			f.t.Fatalf("Weight %d, EffectiveWeight %d; want 0, the free plan's %d",
				x.Weight, x.EffectiveWeight(), docket.PlanFree.Weight())
		}
	}
}

func checkTenantDuplicate(f *docFixture) {
	f.tenant("a")
	_, err := f.s.TenantCreate(f.ctx, &docket.TenantCreateParams{ID: "t_other", Name: "Tenant a", Plan: docket.PlanFree})
	dWantErr(f.t, "TenantCreate(taken name)", err, docket.ErrDuplicate)
	_, err = f.s.TenantCreate(f.ctx, &docket.TenantCreateParams{ID: "t_a", Name: "Another", Plan: docket.PlanFree})
	dWantErr(f.t, "TenantCreate(taken id)", err, docket.ErrDuplicate)
	if ts := f.tenants(); len(ts) != 1 {
		f.t.Fatalf("TenantList: %d tenants after refused creates, want 1", len(ts))
	}
}

func checkTenantInvalid(f *docFixture) {
	for _, p := range []docket.TenantCreateParams{
		{ID: "t_1", Name: "Plan", Plan: "gold"},
		{ID: "t_2", Name: "Concurrency", Plan: docket.PlanFree, Concurrency: -1},
		{ID: "t_3", Name: "", Plan: docket.PlanFree},
		{ID: "t_4", Name: strings.Repeat("n", 201), Plan: docket.PlanFree},
	} {
		_, err := f.s.TenantCreate(f.ctx, &p)
		dWantErr(f.t, "TenantCreate("+p.ID+")", err, docket.ErrInvalid)
	}
	if ts := f.tenants(); len(ts) != 0 {
		f.t.Fatalf("TenantList: %d tenants after invalid creates, want none", len(ts))
	}
}

// tenants lists every tenant.
func (f *docFixture) tenants() []*docket.Tenant {
	f.t.Helper()
	ts, err := f.s.TenantList(f.ctx, nil)
	if err != nil {
		f.t.Fatalf("TenantList: %v", err)
	}
	return ts
}

func checkTenantList(f *docFixture) {
	if ts := f.tenants(); len(ts) != 0 {
		f.t.Fatalf("TenantList on an empty store: %d tenants", len(ts))
	}
	names := []string{"c1", "c2", "c3"}
	for _, n := range names {
		f.tenant(n)
	}
	ts := f.tenants()
	if len(ts) != len(names) {
		f.t.Fatalf("TenantList: %d tenants, want %d", len(ts), len(names))
	}
	for i, tn := range ts {
		if tn.ID != "t_"+names[i] || tn.Name != "Tenant "+names[i] {
			f.t.Fatalf("TenantList[%d] = %s (%s), want t_%s: oldest first", i, tn.ID, tn.Name, names[i])
		}
	}
	// By name: the one tenant of that name, or none; After and Limit do
	// not apply.
	got, err := f.s.TenantList(f.ctx, &docket.TenantListParams{Name: "Tenant c2", After: "t_c3", Limit: 1})
	if err != nil || len(got) != 1 || got[0].ID != "t_c2" {
		f.t.Fatalf("TenantList by name %q: %v, %v; want t_c2 only", "Tenant c2", got, err)
	}
	if got, err := f.s.TenantList(f.ctx, &docket.TenantListParams{Name: "t_c2"}); err != nil || len(got) != 0 {
		f.t.Fatalf("TenantList by the name t_c2 (an id, no name): %v, %v; want none", got, err)
	}
}

// checkTenantListPaged: pages of a limit, each after the last tenant of
// the one before, cover every tenant once, oldest first; a cursor that
// names no tenant is ErrNotFound, a negative limit ErrInvalid.
func checkTenantListPaged(f *docFixture) {
	names := []string{"p1", "p2", "p3", "p4", "p5"}
	for _, n := range names {
		f.tenant(n)
	}
	var got []string
	pages := 0
	for after := ""; ; pages++ {
		ts, err := f.s.TenantList(f.ctx, &docket.TenantListParams{After: after, Limit: 2})
		if err != nil {
			f.t.Fatalf("TenantList(after %q, limit 2): %v", after, err)
		}
		if len(ts) > 2 {
			f.t.Fatalf("TenantList(limit 2): %d tenants", len(ts))
		}
		if len(ts) == 0 {
			break
		}
		for _, tn := range ts {
			got = append(got, strings.TrimPrefix(tn.ID, "t_"))
		}
		after = ts[len(ts)-1].ID
	}
	if strings.Join(got, ",") != strings.Join(names, ",") || pages != 3 {
		f.t.Fatalf("pages of 2: %v in %d pages, want %v in 3", got, pages, names)
	}
	ts, err := f.s.TenantList(f.ctx, &docket.TenantListParams{After: "t_p2"})
	if err != nil || len(ts) != 3 || ts[0].ID != "t_p3" {
		f.t.Fatalf("TenantList(after t_p2, no limit): %d tenants (%v), want the 3 after it", len(ts), err)
	}
	_, err = f.s.TenantList(f.ctx, &docket.TenantListParams{After: "t_nobody", Limit: 2})
	dWantErr(f.t, "TenantList(unknown cursor)", err, docket.ErrNotFound)
	_, err = f.s.TenantList(f.ctx, &docket.TenantListParams{Limit: -1})
	dWantErr(f.t, "TenantList(limit -1)", err, docket.ErrInvalid)
}

func checkTenantUpdate(f *docFixture) {
	tn := f.tenant("u")
	name, plan, conc, rate := "Renamed", docket.PlanEnterprise, 4, 0
	got, err := f.s.TenantUpdate(f.ctx, &docket.TenantUpdateParams{ID: tn.ID, Name: &name, Plan: &plan, Concurrency: &conc})
	if err != nil {
		f.t.Fatalf("TenantUpdate: %v", err)
	}
	stored, err := f.s.TenantGet(f.ctx, tn.ID)
	if err != nil {
		f.t.Fatalf("TenantGet: %v", err)
	}
	for _, x := range []*docket.Tenant{got, stored} {
		if x.Name != name || x.Plan != plan || x.Concurrency != conc || x.RateLimit != rate {
			f.t.Fatalf("updated tenant %+v, want name %s, plan %s, concurrency %d, rate limit %d", x, name, plan, conc, rate)
		}
		if !x.CreatedAt.Equal(tn.CreatedAt) || x.UpdatedAt.Before(tn.UpdatedAt) {
			f.t.Fatalf("times after update: created %v updated %v; before: %v, %v", x.CreatedAt, x.UpdatedAt, tn.CreatedAt, tn.UpdatedAt)
		}
	}
	rate = 25
	got, err = f.s.TenantUpdate(f.ctx, &docket.TenantUpdateParams{ID: tn.ID, RateLimit: &rate})
	if err != nil {
		f.t.Fatalf("TenantUpdate(rate limit): %v", err)
	}
	if got.RateLimit != 25 || got.Name != name || got.Plan != plan || got.Concurrency != conc || got.Weight != 0 {
		f.t.Fatalf("after updating only RateLimit: %+v; nil fields must stay as they were", got)
	}
}

// checkTenantWeight: a tenant's weight is 0 (its plan's) unless set, set
// on create or update, kept by an update that leaves it nil (a plan
// change included), cleared back to 0, and refused out of bounds.
func checkTenantWeight(f *docFixture) {
	get := func(id string) *docket.Tenant {
		f.t.Helper()
		tn, err := f.s.TenantGet(f.ctx, id)
		if err != nil {
			f.t.Fatalf("TenantGet: %v", err)
		}
		return tn
	}
	want := func(what string, tn *docket.Tenant, weight, effective int) {
		f.t.Helper()
		if tn.Weight != weight || tn.EffectiveWeight() != effective {
			f.t.Fatalf("%s: Weight %d, EffectiveWeight %d; want %d, %d", what, tn.Weight, tn.EffectiveWeight(), weight, effective)
		}
	}
	tn := f.tenant("w")
	want("new tenant", tn, 0, docket.PlanFree.Weight())
	want("new tenant, read back", get(tn.ID), 0, docket.PlanFree.Weight())

	created, err := f.s.TenantCreate(f.ctx, &docket.TenantCreateParams{ID: "t_heavy", Name: "Heavy", Plan: docket.PlanStarter, Weight: 12})
	if err != nil {
		f.t.Fatalf("TenantCreate(weight 12): %v", err)
	}
	want("created with weight 12", created, 12, 12)
	want("created with weight 12, read back", get(created.ID), 12, 12)

	weight, plan := 3, docket.PlanEnterprise
	got, err := f.s.TenantUpdate(f.ctx, &docket.TenantUpdateParams{ID: tn.ID, Weight: &weight})
	if err != nil {
		f.t.Fatalf("TenantUpdate(weight 3): %v", err)
	}
	want("updated to weight 3", got, 3, 3)
	want("updated to weight 3, read back", get(tn.ID), 3, 3)
	if got, err = f.s.TenantUpdate(f.ctx, &docket.TenantUpdateParams{ID: tn.ID, Plan: &plan}); err != nil {
		f.t.Fatalf("TenantUpdate(plan): %v", err)
	}
	want("plan changed after weight 3", got, 3, 3)
	want("plan changed after weight 3, read back", get(tn.ID), 3, 3)
	weight = 0
	if got, err = f.s.TenantUpdate(f.ctx, &docket.TenantUpdateParams{ID: tn.ID, Weight: &weight}); err != nil {
		f.t.Fatalf("TenantUpdate(weight 0): %v", err)
	}
	want("weight cleared", got, 0, docket.PlanEnterprise.Weight())
	want("weight cleared, read back", get(tn.ID), 0, docket.PlanEnterprise.Weight())

	for _, w := range []int{-1, docket.MaxTenantWeight + 1} {
		_, err := f.s.TenantUpdate(f.ctx, &docket.TenantUpdateParams{ID: created.ID, Weight: &w})
		dWantErr(f.t, fmt.Sprintf("TenantUpdate(weight %d)", w), err, docket.ErrInvalid)
		_, err = f.s.TenantCreate(f.ctx, &docket.TenantCreateParams{ID: "t_bad", Name: "Bad", Weight: w})
		dWantErr(f.t, fmt.Sprintf("TenantCreate(weight %d)", w), err, docket.ErrInvalid)
	}
	want("after refused updates", get(created.ID), 12, 12)
	if ts := f.tenants(); len(ts) != 2 {
		f.t.Fatalf("TenantList: %d tenants after refused creates, want 2", len(ts))
	}
}

func checkTenantUpdateErrors(f *docFixture) {
	name := "x"
	_, err := f.s.TenantUpdate(f.ctx, &docket.TenantUpdateParams{ID: "t_nobody", Name: &name})
	dWantErr(f.t, "TenantUpdate(unknown)", err, docket.ErrNotFound)
	f.tenant("a")
	b := f.tenant("b")
	taken := "Tenant a"
	_, err = f.s.TenantUpdate(f.ctx, &docket.TenantUpdateParams{ID: b.ID, Name: &taken})
	dWantErr(f.t, "TenantUpdate(taken name)", err, docket.ErrDuplicate)
	plan := docket.Plan("gold")
	_, err = f.s.TenantUpdate(f.ctx, &docket.TenantUpdateParams{ID: b.ID, Plan: &plan})
	dWantErr(f.t, "TenantUpdate(invalid plan)", err, docket.ErrInvalid)
	got, err := f.s.TenantGet(f.ctx, b.ID)
	if err != nil {
		f.t.Fatalf("TenantGet: %v", err)
	}
	if got.Name != b.Name || got.Plan != b.Plan {
		f.t.Fatalf("tenant after refused updates: %+v, want unchanged %+v", got, b)
	}
}
