package driver

import (
	"fmt"
	"math"
)

// Defaults used when a field is left zero.
const (
	DefaultQueue       = "default"
	DefaultMaxAttempts = 3
)

// ValidateQueueName returns an error wrapping ErrInvalid for a name that is
// not 1 to 63 characters of lowercase letters, digits, '_', '.' and '-',
// starting with a letter or digit: names that fit a notification payload
// with room to spare (PostgreSQL caps payloads at 8000 bytes, identifiers
// at 63). docket_jobs checks the same (migration 016; TestQueueCheck_SameAsRegex
// compares the three over edge cases and random names). A loop rather
// than the regular expression ^[a-z0-9][a-z0-9_.-]{0,62}$: every insert
// checks every job's queue, and the expression was 3 % of a worker
// process's CPU under load.
func ValidateQueueName(name string) error {
	ok := len(name) >= 1 && len(name) <= 63 && name[0] != '_' && name[0] != '.' && name[0] != '-'
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
	}
	if !ok {
		return fmt.Errorf("%w: queue name %q: want 1-63 of [a-z0-9_.-], starting with a letter or digit", ErrInvalid, name)
	}
	return nil
}

// MaxLimit is the largest concurrency limit (TenantLimitParams.MaxRunning,
// QueueConfigParams.DefaultTenantLimit) a driver stores: PostgreSQL keeps
// limits as int4.
const MaxLimit = math.MaxInt32

// ValidateLimit returns an error wrapping ErrInvalid for a limit n, named
// what, outside least..MaxLimit.
func ValidateLimit(what string, n, least int) error {
	if n < least || n > MaxLimit {
		return fmt.Errorf("%w: %s %d: want %d to %d", ErrInvalid, what, n, least, MaxLimit)
	}
	return nil
}
