//go:build !chaos

package chaos

// nightlyTier: built without -tags chaos, the smoke tier of make test.
const nightlyTier = false
