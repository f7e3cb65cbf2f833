//go:build chaos

package chaos

// nightlyTier: built with -tags chaos, the nightly tier (make test-nightly).
const nightlyTier = true
