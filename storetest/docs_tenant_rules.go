package storetest

import (
	"strings"

	"github.com/docketq/docket"
)

// checkTenantRules pins the one tenant rule (docket.ValidateTenant) on
// every driver, on create and on update: the bounds are accepted, one past
// them is ErrInvalid and writes nothing. The drivers' own copies had
// drifted: SQLite stored a name that is not UTF-8, neither bounded the
// concurrency (the admin API stopped at 1000) nor refused a blank name.
func checkTenantRules(f *docFixture) {
	ok := docket.TenantCreateParams{ID: strings.Repeat("a", 200), Name: strings.Repeat("é", 200),
		Plan: docket.PlanFree, Concurrency: docket.MaxTenantConcurrency, RateLimit: docket.MaxTenantRateLimit,
		Weight: docket.MaxTenantWeight}
	if _, err := f.s.TenantCreate(f.ctx, &ok); err != nil {
		f.t.Fatalf("TenantCreate(at every bound): %v", err)
	}
	for name, p := range map[string]docket.TenantCreateParams{
		"id of 201":           {ID: strings.Repeat("b", 201), Name: "id"},
		"id with a dot":       {ID: "t.x", Name: "dot"},
		"name not UTF-8":      {ID: "t_utf8", Name: "bad \xff name"},
		"blank name":          {ID: "t_blank", Name: " \t "},
		"name of 201":         {ID: "t_long", Name: strings.Repeat("é", 201)},
		"concurrency 1001":    {ID: "t_conc", Name: "conc", Concurrency: docket.MaxTenantConcurrency + 1},
		"rate limit past max": {ID: "t_rate", Name: "rate", RateLimit: docket.MaxTenantRateLimit + 1},
		"negative rate limit": {ID: "t_neg", Name: "neg", RateLimit: -1},
		"weight past max":     {ID: "t_weight", Name: "weight", Weight: docket.MaxTenantWeight + 1},
		"negative weight":     {ID: "t_negw", Name: "negw", Weight: -1},
	} {
		_, err := f.s.TenantCreate(f.ctx, &p)
		dWantErr(f.t, "TenantCreate("+name+")", err, docket.ErrInvalid)
	}
	if ts := f.tenants(); len(ts) != 1 {
		f.t.Fatalf("TenantList: %d tenants after invalid creates, want 1", len(ts))
	}

	tn := f.tenant("rules")
	bad, blank, conc, rate, weight := "bad \xff", "   ", docket.MaxTenantConcurrency+1, docket.MaxTenantRateLimit+1, docket.MaxTenantWeight+1
	for name, p := range map[string]docket.TenantUpdateParams{
		"name not UTF-8":      {Name: &bad},
		"blank name":          {Name: &blank},
		"concurrency 1001":    {Concurrency: &conc},
		"rate limit past max": {RateLimit: &rate},
		"weight past max":     {Weight: &weight},
	} {
		p.ID = tn.ID
		_, err := f.s.TenantUpdate(f.ctx, &p)
		dWantErr(f.t, "TenantUpdate("+name+")", err, docket.ErrInvalid)
	}
	got, err := f.s.TenantGet(f.ctx, tn.ID)
	if err != nil {
		f.t.Fatalf("TenantGet: %v", err)
	}
	if got.Name != tn.Name || got.Concurrency != tn.Concurrency || got.RateLimit != tn.RateLimit || got.Weight != tn.Weight {
		f.t.Fatalf("tenant %+v after refused updates, want it unchanged (%+v)", got, tn)
	}
}
