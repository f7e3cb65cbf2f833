package dispatch_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketq/docket/dispatch"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/sqlite"
	"github.com/docketq/docket/webhook"
)

func newDispatcher(t *testing.T, secrets ...string) *dispatch.Dispatcher {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "d.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	d, err := dispatch.New(dispatch.Config{
		Client:    queue.NewClient(db, queue.ClientConfig{}),
		Endpoints: []dispatch.Endpoint{{Kind: "hook", URL: "https://hooks.example/", Secrets: secrets}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDispatcher_Token: a callback token names its lease and verifies
// only for its job and kind, under the kind's secrets (either one while
// rotating); any change to it, or a token made up from a lease alone, is
// refused.
func TestDispatcher_Token(t *testing.T) {
	t.Parallel()
	old, next := webhook.NewSecret(), webhook.NewSecret()
	d := newDispatcher(t, old)
	l := queue.Lease{JobID: 42, Attempt: 2, Token: 8_123_456_789}
	tok, err := d.Token("hook", l)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := d.CheckToken("hook", 42, tok); err != nil || got != l {
		t.Fatalf("CheckToken = %+v, %v; want %+v", got, err, l)
	}
	if got, err := newDispatcher(t, next, old).CheckToken("hook", 42, tok); err != nil || got != l {
		t.Errorf("after rotation (new secret first): %+v, %v", got, err)
	}
	parts := strings.Split(tok, ".")
	for name, bad := range map[string]string{
		"other job":         "", // checked below with id 43
		"attempt changed":   "3." + parts[1] + "." + parts[2],
		"token changed":     parts[0] + ".8123456788." + parts[2],
		"mac changed":       parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2])),
		"lease alone":       parts[0] + "." + parts[1],
		"empty":             "",
		"other secret only": mustToken(t, newDispatcher(t, next), l),
	} {
		id := int64(42)
		if name == "other job" {
			id, bad = 43, tok
		}
		if _, err := d.CheckToken("hook", id, bad); !errors.Is(err, dispatch.ErrToken) {
			t.Errorf("%s: %v, want ErrToken", name, err)
		}
	}
	if _, err := d.CheckToken("other", 42, tok); !errors.Is(err, dispatch.ErrToken) {
		t.Errorf("another kind: %v, want ErrToken", err)
	}
}

func mustToken(t *testing.T, d *dispatch.Dispatcher, l queue.Lease) string {
	t.Helper()
	tok, err := d.Token("hook", l)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
