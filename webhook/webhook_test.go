package webhook_test

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/docketq/docket/webhook"
)

// The specification's published example (and the reference libraries'
// shared test vector).
const (
	vecSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vecID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vecTimestamp = 1614265330
	vecBody      = `{"test": 2432232314}`
	vecSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSigner_SpecVector(t *testing.T) {
	t.Parallel()
	s, err := webhook.NewSigner(vecSecret)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Signature(vecID, time.Unix(vecTimestamp, 0), []byte(vecBody)); got != vecSignature {
		t.Fatalf("Signature = %q, want %q", got, vecSignature)
	}
	v, err := webhook.NewVerifier(vecSecret)
	if err != nil {
		t.Fatal(err)
	}
	v.Now = func() time.Time { return time.Unix(vecTimestamp+10, 0) }
	h := http.Header{}
	h.Set(webhook.HeaderID, vecID)
	h.Set(webhook.HeaderTimestamp, strconv.Itoa(vecTimestamp))
	h.Set(webhook.HeaderSignature, vecSignature)
	if err := v.Verify(h, []byte(vecBody)); err != nil {
		t.Fatalf("Verify(spec vector): %v", err)
	}
}

func secretOf(n int, fill byte) string {
	return "whsec_" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat(string(fill), n)))
}

func TestParseSecret(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, secret string
		ok           bool
	}{
		{"spec example, 24 bytes", vecSecret, true},
		{"32 bytes", secretOf(32, 'a'), true},
		{"without prefix", strings.TrimPrefix(secretOf(32, 'a'), "whsec_"), true},
		{"23 bytes", secretOf(23, 'a'), false},
		{"65 bytes", secretOf(65, 'a'), false},
		{"empty", "whsec_", false},
		{"not base64", "whsec_!!!!", false},
		{"generated", webhook.NewSecret(), true},
	} {
		_, err := webhook.ParseSecret(tc.secret)
		if (err == nil) != tc.ok {
			t.Errorf("%s: ParseSecret(%q) = %v, want ok %v", tc.name, tc.secret, err, tc.ok)
		}
		if err != nil && !errors.Is(err, webhook.ErrSecret) {
			t.Errorf("%s: %v is not ErrSecret", tc.name, err)
		}
		if _, err := webhook.NewSigner(tc.secret); (err == nil) != tc.ok {
			t.Errorf("%s: NewSigner = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// message is one signed request as the tests alter it.
type message struct {
	header http.Header
	body   []byte
}

func signed(t *testing.T, ts time.Time, secrets ...string) message {
	t.Helper()
	s, err := webhook.NewSigner(secrets...)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"job":{"id":"42","kind":"resize"}}`)
	h := http.Header{}
	s.SetHeaders(h, "job_42", ts, body)
	return message{header: h, body: body}
}

// TestVerify_Conformance: our signer's output verifies
// with the Standard Webhooks reference Go verifier and ours; each tampered
// message is refused by both.
func TestVerify_Conformance(t *testing.T) {
	t.Parallel()
	secret := secretOf(32, 'k')
	now := time.Now()
	for _, tc := range []struct {
		name   string
		ts     time.Time
		alter  func(m *message)
		accept bool
	}{
		{"as signed", now, nil, true},
		{"tampered body", now, func(m *message) { m.body = []byte(`{"job":{"id":"43","kind":"resize"}}`) }, false},
		{"tampered id", now, func(m *message) { m.header.Set(webhook.HeaderID, "job_43") }, false},
		{"tampered timestamp", now, func(m *message) {
			m.header.Set(webhook.HeaderTimestamp, strconv.FormatInt(now.Unix()+1, 10))
		}, false},
		// A minute past the 5-minute tolerance either way, and a minute
		// inside it: the subtests run in parallel under -race, and a
		// timestamp 1 s past the edge (whole seconds) was accepted when the
		// verification came a second late (a CI run, 2026-11-29).
		{"timestamp -360 s", now.Add(-360 * time.Second), nil, false},
		{"timestamp +360 s", now.Add(360 * time.Second), nil, false},
		{"timestamp -240 s", now.Add(-240 * time.Second), nil, true},
		{"unknown version prefix", now, func(m *message) {
			m.header.Set(webhook.HeaderSignature, "v2,"+strings.TrimPrefix(m.header.Get(webhook.HeaderSignature), "v1,"))
		}, false},
		{"empty signature list", now, func(m *message) { m.header.Set(webhook.HeaderSignature, "") }, false},
		{"empty v1 signature", now, func(m *message) { m.header.Set(webhook.HeaderSignature, "v1,") }, false},
		{"missing id", now, func(m *message) { m.header.Del(webhook.HeaderID) }, false},
		{"timestamp not a number", now, func(m *message) { m.header.Set(webhook.HeaderTimestamp, "soon") }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := signed(t, tc.ts, secret)
			if tc.alter != nil {
				tc.alter(&m)
			}
			ours, err := webhook.NewVerifier(secret)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := standardwebhooks.NewWebhook(secret)
			if err != nil {
				t.Fatal(err)
			}
			if err := ours.Verify(m.header, m.body); (err == nil) != tc.accept {
				t.Errorf("ours: Verify = %v, want accept %v", err, tc.accept)
			}
			if err := ref.Verify(m.body, m.header); (err == nil) != tc.accept {
				t.Errorf("reference: Verify = %v, want accept %v", err, tc.accept)
			}
		})
	}
}

// TestVerify_Rotation: during a rotation the signer sends a signature per
// secret, and a receiver holding either one accepts; one holding neither
// refuses.
func TestVerify_Rotation(t *testing.T) {
	t.Parallel()
	old, next, other := secretOf(32, 'o'), secretOf(32, 'n'), secretOf(32, 'x')
	m := signed(t, time.Now(), next, old)
	if n := len(strings.Fields(m.header.Get(webhook.HeaderSignature))); n != 2 {
		t.Fatalf("webhook-signature has %d signatures, want 2", n)
	}
	for _, tc := range []struct {
		secret string
		accept bool
	}{{old, true}, {next, true}, {other, false}} {
		v, err := webhook.NewVerifier(tc.secret)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Verify(m.header, m.body); (err == nil) != tc.accept {
			t.Errorf("ours with %s: %v, want accept %v", tc.secret, err, tc.accept)
		}
		ref, err := standardwebhooks.NewWebhook(tc.secret)
		if err != nil {
			t.Fatal(err)
		}
		if err := ref.Verify(m.body, m.header); (err == nil) != tc.accept {
			t.Errorf("reference with %s: %v, want accept %v", tc.secret, err, tc.accept)
		}
	}
	// A verifier holding both secrets accepts a message signed by either.
	both, err := webhook.NewVerifier(old, next)
	if err != nil {
		t.Fatal(err)
	}
	if err := both.Verify(signed(t, time.Now(), old).header, m.body); err != nil {
		t.Errorf("verifier with both secrets, message by the old one: %v", err)
	}
}
