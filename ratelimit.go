package docket

import "time"

// RateLimitParams names a tenant's rolling-window limit.
type RateLimitParams struct {
	Limit  int           // events allowed per window; at least 1
	Window time.Duration // e.g. RateWindow
}

// RateLimit is the state of a tenant's window after (or without) taking a
// slot.
type RateLimit struct {
	Allowed   bool // the slot was taken (always false for a peek)
	Limit     int
	Remaining int // slots left in the window now
	// RetryAfter is how long until the next slot opens when none is left;
	// zero while slots remain.
	RetryAfter time.Duration
}
