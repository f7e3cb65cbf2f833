package blob

import (
	"fmt"
	"strings"
)

// Key length limits: S3 allows 1024 bytes per key; most file systems 255 per path element.
const (
	MaxKeyLen     = 512
	MaxSegmentLen = 255
)

// CheckKey reports whether key is a valid blob key: one or more segments separated by single
// slashes, each made of ASCII letters, digits, '_' and '-', at most MaxSegmentLen bytes each and
// MaxKeyLen in all. So no "..", no leading or trailing slash, no backslash, no dot, no space.
// It returns nil or an error wrapping ErrInvalidKey.
func CheckKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	}
	if len(key) > MaxKeyLen {
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidKey, MaxKeyLen)
	}
	for seg := range strings.SplitSeq(key, "/") {
		if problem := checkSegment(seg); problem != "" {
			return fmt.Errorf("%w %q: %s", ErrInvalidKey, key, problem)
		}
	}
	return nil
}

// checkSegment describes what is wrong with one path segment, or returns "".
func checkSegment(seg string) string {
	if seg == "" {
		return "empty segment"
	}
	if len(seg) > MaxSegmentLen {
		return fmt.Sprintf("segment longer than %d bytes", MaxSegmentLen)
	}
	for i := 0; i < len(seg); i++ {
		if !keyByte(seg[i]) {
			return fmt.Sprintf("byte %q not allowed (only A-Z a-z 0-9 _ - and /)", seg[i])
		}
	}
	return ""
}

func keyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
