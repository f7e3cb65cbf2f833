// Package webhook signs and verifies HTTP requests per the Standard
// Webhooks specification: an HMAC-SHA256 over "<id>.<timestamp>.<body>"
// sent in the webhook-id, webhook-timestamp and webhook-signature headers,
// the signature as "v1,<base64>" (several, space-separated, while a secret
// is rotated), secrets written "whsec_<base64>".
//
// The dispatch package signs every job it POSTs with a Signer; an endpoint
// written in Go checks requests with a Verifier (any Standard Webhooks
// library does the same in other languages).
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The headers of a signed request.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Secret lengths in bytes (decoded), as the specification asks.
const (
	MinSecretBytes = 24
	MaxSecretBytes = 64
)

// DefaultTolerance is how far a request's timestamp may be from the
// verifier's clock, either way.
const DefaultTolerance = 5 * time.Minute

const secretPrefix = "whsec_"

// Errors of verification and configuration.
var (
	// ErrSecret: a secret that is not "whsec_" and base64 of 24 to 64 bytes.
	ErrSecret = errors.New("webhook: bad secret")
	// ErrHeaders: a required header is missing or malformed.
	ErrHeaders = errors.New("webhook: missing or malformed signature headers")
	// ErrTimestamp: the timestamp is outside the tolerance.
	ErrTimestamp = errors.New("webhook: timestamp outside the tolerance")
	// ErrSignature: no v1 signature matches any secret.
	ErrSignature = errors.New("webhook: no matching signature")
)

// ParseSecret decodes a "whsec_<base64>" secret (the prefix is optional)
// and checks its length.
func ParseSecret(s string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, secretPrefix))
	if err != nil {
		return nil, fmt.Errorf("%w: not base64 after %q", ErrSecret, secretPrefix)
	}
	if len(key) < MinSecretBytes || len(key) > MaxSecretBytes {
		return nil, fmt.Errorf("%w: %d bytes, want %d to %d", ErrSecret, len(key), MinSecretBytes, MaxSecretBytes)
	}
	return key, nil
}

// NewSecret returns a new random secret of 32 bytes, written "whsec_...".
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return secretPrefix + base64.StdEncoding.EncodeToString(b)
}

func parseSecrets(secrets []string) ([][]byte, error) {
	if len(secrets) == 0 {
		return nil, fmt.Errorf("%w: none given", ErrSecret)
	}
	keys := make([][]byte, len(secrets))
	for i, s := range secrets {
		k, err := ParseSecret(s)
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	return keys, nil
}

// sign returns the base64 HMAC-SHA256 of "<id>.<unix ts>.<body>".
func sign(key []byte, id string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "."))
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// Signer signs requests with one secret or, while it is rotated, several:
// each request then carries a signature per secret, so receivers holding
// either the old or the new secret accept it.
type Signer struct{ keys [][]byte }

// NewSigner returns a signer for the given "whsec_" secrets.
func NewSigner(secrets ...string) (*Signer, error) {
	keys, err := parseSecrets(secrets)
	if err != nil {
		return nil, err
	}
	return &Signer{keys: keys}, nil
}

// Signature returns the webhook-signature header value for a message.
func (s *Signer) Signature(id string, ts time.Time, body []byte) string {
	sigs := make([]string, len(s.keys))
	for i, k := range s.keys {
		sigs[i] = "v1," + sign(k, id, ts.Unix(), body)
	}
	return strings.Join(sigs, " ")
}

// SetHeaders sets the three signature headers of a message on h.
func (s *Signer) SetHeaders(h http.Header, id string, ts time.Time, body []byte) {
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, s.Signature(id, ts, body))
}

// Verifier checks signed requests against one or more secrets.
type Verifier struct {
	keys [][]byte
	// Tolerance is how far the timestamp may be from now. Default
	// DefaultTolerance.
	Tolerance time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// NewVerifier returns a verifier accepting a signature by any of secrets.
func NewVerifier(secrets ...string) (*Verifier, error) {
	keys, err := parseSecrets(secrets)
	if err != nil {
		return nil, err
	}
	return &Verifier{keys: keys}, nil
}

// Verify checks the headers of a request against its body: the id,
// a timestamp within the tolerance and a v1 signature by one of the
// secrets. Signatures of other versions are ignored.
func (v *Verifier) Verify(h http.Header, body []byte) error {
	id, tsText, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || tsText == "" || sigs == "" {
		return ErrHeaders
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: timestamp %q", ErrHeaders, tsText)
	}
	now, tol := time.Now, v.Tolerance
	if v.Now != nil {
		now = v.Now
	}
	if tol <= 0 {
		tol = DefaultTolerance
	}
	if d := now().Sub(time.Unix(ts, 0)); d > tol || d < -tol {
		return fmt.Errorf("%w: %s off", ErrTimestamp, d.Round(time.Second))
	}
	for _, k := range v.keys {
		want := []byte(sign(k, id, ts, body))
		for sig := range strings.FieldsSeq(sigs) {
			version, value, ok := strings.Cut(sig, ",")
			if ok && version == "v1" && hmac.Equal([]byte(value), want) {
				return nil
			}
		}
	}
	return ErrSignature
}
