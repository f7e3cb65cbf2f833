package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"io"
	"testing"
)

// TestNewAdminKey: a random draw whose key checkAdminKey refuses is
// discarded. 32 bytes whose base64url has no digit and no '-' or '_' (as
// about 1 in 7,500 random keys) once made serve write a key that every
// command reading it back refused.
func TestNewAdminKey(t *testing.T) {
	t.Parallel()
	weak := bytes.Repeat([]byte{0x69, 0xa6, 0x9a}, 11)[:32] // "aaaa…": one character
	if err := checkAdminKey(base64.RawURLEncoding.EncodeToString(weak)); err == nil {
		t.Fatal("the test's weak draw passes checkAdminKey")
	}
	key, err := newAdminKey(io.MultiReader(bytes.NewReader(weak), rand.Reader))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkAdminKey(key); err != nil {
		t.Errorf("newAdminKey returned %q: %v", key, err)
	}
	if _, err := newAdminKey(bytes.NewReader(bytes.Repeat(weak, 100))); err == nil {
		t.Error("a source of weak draws only: no error")
	}
}
