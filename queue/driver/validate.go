package driver

import (
	"fmt"
	"regexp"
)

// Defaults used when a field is left zero.
const (
	DefaultQueue       = "default"
	DefaultMaxAttempts = 3
)

// queueNameRE allows names that fit a notification payload with room to
// spare (PostgreSQL caps payloads at 8000 bytes; identifiers at 63).
var queueNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,62}$`)

// ValidateQueueName returns an error wrapping ErrInvalid for a name that is
// not 1 to 63 characters of lowercase letters, digits, '_', '.' and '-'.
func ValidateQueueName(name string) error {
	if !queueNameRE.MatchString(name) {
		return fmt.Errorf("%w: queue name %q: want 1-63 of [a-z0-9_.-], starting with a letter or digit", ErrInvalid, name)
	}
	return nil
}
