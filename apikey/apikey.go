// Package apikey makes and checks Docket's API keys.
//
// A key reads "dk_" followed by 43 base62 characters of randomness (32
// bytes) and a 6-character base62 CRC-32 of everything before it:
//
//	dk_4f1Xq...(43)...Zk9a2L
//
// The checksum lets Parse reject a mistyped or made-up key without touching
// the database. The first IDLen random characters are the key's public id,
// under which the store keeps the key's SHA-256 hash, never the key itself;
// Verify compares hashes in constant time.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"hash/crc32"
	"math/big"
	"strings"
)

// Prefix starts every key, so that secret scanners and people recognise it.
const Prefix = "dk_"

const (
	randomLen = 43 // base62 digits of a 32-byte number
	sumLen    = 6  // base62 digits of a CRC-32
	// IDLen is the length of a key's public id (the start of its random part).
	IDLen = 16
	// Len is the length of a whole key.
	Len = len(Prefix) + randomLen + sumLen
)

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// ErrMalformed: the string is not a well-formed key (wrong prefix, length,
// characters or checksum).
var ErrMalformed = errors.New("malformed API key")

// Key is a newly generated key: Plain is shown to its owner once; ID and
// Hash are what the store keeps.
type Key struct {
	Plain string
	ID    string
	Hash  []byte
}

// Generate returns a new random key.
func Generate() (Key, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Key{}, err
	}
	body := Prefix + encode(new(big.Int).SetBytes(b[:]), randomLen)
	plain := body + checksum(body)
	return Key{Plain: plain, ID: plain[len(Prefix) : len(Prefix)+IDLen], Hash: Hash(plain)}, nil
}

// Parse checks key's form and checksum and returns its public id.
func Parse(key string) (id string, err error) {
	if len(key) != Len || !strings.HasPrefix(key, Prefix) {
		return "", ErrMalformed
	}
	for i := len(Prefix); i < len(key); i++ {
		if strings.IndexByte(alphabet, key[i]) < 0 {
			return "", ErrMalformed
		}
	}
	body, sum := key[:Len-sumLen], key[Len-sumLen:]
	if subtle.ConstantTimeCompare([]byte(checksum(body)), []byte(sum)) != 1 {
		return "", ErrMalformed
	}
	return key[len(Prefix) : len(Prefix)+IDLen], nil
}

// Hash returns the SHA-256 of key, the form the store keeps.
func Hash(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// Verify reports, in constant time, whether key hashes to hash.
func Verify(key string, hash []byte) bool {
	return subtle.ConstantTimeCompare(Hash(key), hash) == 1
}

func checksum(body string) string {
	return encode(new(big.Int).SetUint64(uint64(crc32.ChecksumIEEE([]byte(body)))), sumLen)
}

// encode writes n in base62 with exactly width digits (zero-padded).
func encode(n *big.Int, width int) string {
	out := make([]byte, width)
	base := big.NewInt(62)
	mod := new(big.Int)
	for i := width - 1; i >= 0; i-- {
		n.DivMod(n, base, mod)
		out[i] = alphabet[mod.Int64()]
	}
	return string(out)
}
