package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// minAdminKeyBits is the strength an admin key must have: 32 random bytes'
// worth.
const minAdminKeyBits = 256

// adminKeyFileName is where serve keeps the admin key it generates, in the
// data dir.
const adminKeyFileName = "admin.key"

// checkAdminKey refuses a key weaker than minAdminKeyBits, estimated as its
// length times the bits of the character classes it uses (digits, lower
// and upper case, others), and a key of fewer than 10 distinct characters.
func checkAdminKey(k string) error {
	var digit, lower, upper, other bool
	distinct := map[rune]bool{}
	for _, r := range k {
		distinct[r] = true
		switch {
		case r >= '0' && r <= '9':
			digit = true
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= 'A' && r <= 'Z':
			upper = true
		default:
			other = true
		}
	}
	alphabet := 0
	for _, c := range []struct {
		used bool
		n    int
	}{{digit, 10}, {lower, 26}, {upper, 26}, {other, 33}} {
		if c.used {
			alphabet += c.n
		}
	}
	bits := float64(len([]rune(k))) * math.Log2(float64(max(alphabet, 1)))
	if bits < minAdminKeyBits || len(distinct) < 10 {
		return errors.New("--admin-key: too weak; use 32 random bytes' worth, e.g. openssl rand -base64 32 (or give none, and serve generates one)")
	}
	return nil
}

// resolveAdminKey returns the admin key: the one given (--admin-key or
// DOCKET_ADMIN_KEY), else the one in --admin-key-file, else the one serve
// generated in the data dir before, else a new one written there (0600).
// A generated key is printed once, when it is generated (as the first
// tenant's API key is); later starts print the file's path only. It sets
// f.adminKeyFile to the file the key came from, if any.
func (f *httpFlags) resolveAdminKey(dataDir string, stdout io.Writer) (string, error) {
	switch {
	case f.adminKey != "":
		return f.adminKey, nil
	case f.adminKeyFile != "":
		return readAdminKey(f.adminKeyFile)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", fmt.Errorf("data dir: %w", err)
	}
	path := filepath.Join(dataDir, adminKeyFileName)
	key, err := newAdminKey(rand.Reader)
	if err != nil {
		return "", fmt.Errorf("admin key: %w", err)
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case errors.Is(err, os.ErrExist):
		key, err = readAdminKey(path)
		if err != nil {
			return "", err
		}
	case err != nil:
		return "", fmt.Errorf("admin key: %w", err)
	default:
		_, err = file.WriteString(key + "\n")
		if err = errors.Join(err, file.Sync(), file.Close()); err != nil {
			return "", fmt.Errorf("admin key: %w", err)
		}
		fmt.Fprintf(stdout, "admin_key: %s\n", key)
	}
	fmt.Fprintf(stdout, "admin_key_file: %s\n", path)
	f.adminKeyFile = path
	return key, nil
}

// newAdminKey returns 32 bytes of r in base64url that checkAdminKey takes.
// A random key can miss a class of characters (about 1 in 7,500 has no
// digit and no '-' or '_'), and the estimate then puts it below 256 bits:
// serve wrote such a key, and every command reading it back refused it
// (a CI failure, 2026-11-25). Such a draw is discarded.
func newAdminKey(r io.Reader) (string, error) {
	for range 100 {
		var b [32]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return "", err
		}
		if key := base64.RawURLEncoding.EncodeToString(b[:]); checkAdminKey(key) == nil {
			return key, nil
		}
	}
	return "", errors.New("no strong key in 100 draws: the random source is broken")
}

// readAdminKey reads a key file (surrounding white space is not part of
// the key) and checks the key's strength.
func readAdminKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--admin-key-file: %w", err)
	}
	key := strings.TrimSpace(string(b))
	if err := checkAdminKey(key); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return key, nil
}
