package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/docketq/docket/queue"
)

// Text PostgreSQL cannot store (a NUL byte, invalid UTF-8; in JSON, the
// escape \u0000) was refused there with ErrInvalid, and stored by SQLite:
// an application tried on the embedded default then failed in production.
// Both drivers now refuse it in the client, before the store.
func TestClient_EnqueueTextNotStorable(t *testing.T) {
	t.Parallel()
	cases := map[string]*queue.EnqueueParams{
		"kind with NUL":              {Kind: "a\x00b", TenantID: "t"},
		"tenant with NUL":            {Kind: "k", TenantID: "t\x00"},
		"tenant not UTF-8":           {Kind: "k", TenantID: "t\xff"},
		"kind not UTF-8":             {Kind: "k\xc3", TenantID: "t"},
		"unique key with NUL":        {Kind: "k", TenantID: "t", UniqueKey: "u\x00"},
		"args with a NUL escape":     {Kind: "k", TenantID: "t", Args: json.RawMessage(`{"a":"x\u0000y"}`)},
		"args marshalled with NUL":   {Kind: "k", TenantID: "t", Args: map[string]string{"a": "\x00"}},
		"args with a lone surrogate": {Kind: "k", TenantID: "t", Args: json.RawMessage(`{"a":"\ud800"}`)},
		"args with a low half first": {Kind: "k", TenantID: "t", Args: json.RawMessage(`["\udc00\ud800"]`)},
		"args not UTF-8":             {Kind: "k", TenantID: "t", Args: json.RawMessage("{\"a\":\"\xff\"}")},
		"metadata value with NUL":    {Kind: "k", TenantID: "t", Metadata: map[string]string{"k": "v\x00"}},
		"metadata key not UTF-8":     {Kind: "k", TenantID: "t", Metadata: map[string]string{"k\xff": "v"}},
	}
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		for name, p := range cases {
			if _, err := c.Enqueue(ctx, p); !errors.Is(err, queue.ErrInvalid) {
				t.Errorf("%s: Enqueue = %v, want ErrInvalid", name, err)
			}
		}
		// An escaped backslash before u0000 is text, not a NUL; a whole
		// surrogate pair is a character.
		for _, args := range []string{`{"a":"\\u0000"}`, `{"a":"\ud83d\ude00"}`} {
			if _, err := c.Enqueue(ctx, &queue.EnqueueParams{Kind: "k", TenantID: "t", Args: json.RawMessage(args)}); err != nil {
				t.Errorf("args %s: %v, want stored", args, err)
			}
		}
		jobs, err := c.List(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 2 {
			t.Errorf("%d jobs stored, want the two storable ones", len(jobs))
		}
	})
}
