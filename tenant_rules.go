package docket

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds of a tenant's settings, checked by ValidateTenant.
const (
	// MaxTenantConcurrency bounds Tenant.Concurrency.
	MaxTenantConcurrency = 1000
	// MaxTenantRateLimit bounds Tenant.RateLimit (uploads per RateWindow).
	MaxTenantRateLimit = 1_000_000
	// MaxTenantWeight bounds Tenant.Weight (the plans' run from 1 to 8).
	MaxTenantWeight = 1000
	// maxTenantIDLen and maxTenantNameLen bound the id (bytes) and the
	// name (characters).
	maxTenantIDLen   = 200
	maxTenantNameLen = 200
)

// ValidateTenant checks a tenant before a store writes it: the one rule,
// which both drivers and Provision apply. The id is 1-200 letters, digits,
// '-' or '_' (it is a blob key segment); the name is valid UTF-8, 1-200
// characters and not only white space; the plan is one of Plans;
// concurrency is 1-MaxTenantConcurrency; the rate limit 0 (the plan's) to
// MaxTenantRateLimit; the weight 0 (the plan's) to MaxTenantWeight.
// Errors wrap ErrInvalid.
func ValidateTenant(t *Tenant) error {
	if !validTenantID(t.ID) {
		return fmt.Errorf("%w: tenant id %q: want 1-%d letters, digits, '-' or '_'", ErrInvalid, t.ID, maxTenantIDLen)
	}
	return (&TenantUpdateParams{ID: t.ID, Name: &t.Name, Plan: &t.Plan, Concurrency: &t.Concurrency, RateLimit: &t.RateLimit, Weight: &t.Weight}).Validate()
}

// Validate checks the fields an update sets by ValidateTenant's rules;
// nil fields are not checked. Errors wrap ErrInvalid.
func (p *TenantUpdateParams) Validate() error {
	switch {
	case p.Name != nil && !validTenantName(*p.Name):
		return fmt.Errorf("%w: tenant name: want 1-%d characters of valid UTF-8, not only white space", ErrInvalid, maxTenantNameLen)
	case p.Plan != nil && !p.Plan.Valid():
		return fmt.Errorf("%w: plan %q: want free, starter, pro or enterprise", ErrInvalid, *p.Plan)
	case p.Concurrency != nil && (*p.Concurrency < 1 || *p.Concurrency > MaxTenantConcurrency):
		return fmt.Errorf("%w: concurrency %d: want 1-%d", ErrInvalid, *p.Concurrency, MaxTenantConcurrency)
	case p.RateLimit != nil && (*p.RateLimit < 0 || *p.RateLimit > MaxTenantRateLimit):
		return fmt.Errorf("%w: rate limit %d: want 0 (the plan's) to %d", ErrInvalid, *p.RateLimit, MaxTenantRateLimit)
	case p.Weight != nil && (*p.Weight < 0 || *p.Weight > MaxTenantWeight):
		return fmt.Errorf("%w: weight %d: want 0 (the plan's) to %d", ErrInvalid, *p.Weight, MaxTenantWeight)
	}
	return nil
}

func validTenantName(name string) bool {
	return utf8.ValidString(name) && strings.TrimSpace(name) != "" && utf8.RuneCountInString(name) <= maxTenantNameLen
}

func validTenantID(id string) bool {
	if id == "" || len(id) > maxTenantIDLen {
		return false
	}
	for _, c := range id {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
		if !ok {
			return false
		}
	}
	return true
}
