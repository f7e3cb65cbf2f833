package apikey_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/docketq/docket/apikey"
)

func TestGenerate_Parse(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 200 {
		k, err := apikey.Generate()
		if err != nil {
			t.Fatal(err)
		}
		if len(k.Plain) != apikey.Len || !strings.HasPrefix(k.Plain, apikey.Prefix) {
			t.Fatalf("key %q: want %d characters starting %q", k.Plain, apikey.Len, apikey.Prefix)
		}
		id, err := apikey.Parse(k.Plain)
		if err != nil || id != k.ID || len(id) != apikey.IDLen {
			t.Fatalf("Parse(%q) = %q, %v; want %q", k.Plain, id, err, k.ID)
		}
		if !apikey.Verify(k.Plain, k.Hash) {
			t.Fatal("Verify of the generated key failed")
		}
		if seen[k.ID] {
			t.Fatalf("id %q generated twice", k.ID)
		}
		seen[k.ID] = true
	}
}

func TestParse_Malformed(t *testing.T) {
	t.Parallel()
	k, err := apikey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	flip := []byte(k.Plain)
	if flip[10] == 'a' {
		flip[10] = 'b'
	} else {
		flip[10] = 'a'
	}
	tests := map[string]string{
		"empty":           "",
		"other prefix":    "sk_" + k.Plain[3:],
		"short":           k.Plain[:len(k.Plain)-1],
		"long":            k.Plain + "a",
		"bad checksum":    string(flip),
		"bad character":   k.Plain[:20] + "-" + k.Plain[21:],
		"bearer in key":   "Bearer " + k.Plain,
		"unicode":         strings.Replace(k.Plain, k.Plain[5:6], "é", 1),
		"only the prefix": apikey.Prefix,
	}
	for name, key := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := apikey.Parse(key); !errors.Is(err, apikey.ErrMalformed) {
				t.Fatalf("Parse(%q) error = %v, want ErrMalformed", key, err)
			}
		})
	}
}

func TestVerify_OtherKey(t *testing.T) {
	t.Parallel()
	a, _ := apikey.Generate()
	b, _ := apikey.Generate()
	if apikey.Verify(a.Plain, b.Hash) {
		t.Fatal("a key verified against another key's hash")
	}
}

func FuzzParse(f *testing.F) {
	k, _ := apikey.Generate()
	f.Add(k.Plain)
	f.Add("dk_")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := apikey.Parse(s)
		if err == nil && (len(id) != apikey.IDLen || !strings.HasPrefix(s, apikey.Prefix)) {
			t.Fatalf("Parse(%q) accepted with id %q", s, id)
		}
	})
}
