package docket

import "time"

// IdempotencyRecord is the first response to a request that carried an
// Idempotency-Key, kept so that a repeat is answered the same way.
type IdempotencyRecord struct {
	Key string // the header's value, unique per tenant
	// RequestHash identifies the request body (hex SHA-256); a repeat with
	// another body is refused.
	RequestHash string
	StatusCode  int
	Body        []byte // the JSON response
	DocumentID  string
	CreatedAt   time.Time
}
