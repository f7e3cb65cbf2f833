package httpapi

import (
	"strings"
)

// maxFilenameBytes caps a document's display name.
const maxFilenameBytes = 255

// fallbackFilename names a document whose upload gave no usable name.
const fallbackFilename = "document"

// sanitizeFilename turns a client's filename into a display name: the part
// after the last '/' or '\', every character outside [A-Za-z0-9._ -]
// replaced by '_', leading and trailing dots and spaces trimmed, at most
// maxFilenameBytes, never "." or ".."; when nothing usable is left,
// "document". The display name is shown to people only: blob keys never
// contain it.
func sanitizeFilename(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	b.Grow(min(len(name), maxFilenameBytes))
	for _, r := range name {
		if b.Len() >= maxFilenameBytes {
			break
		}
		if filenameRune(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	out := strings.Trim(b.String(), ". ")
	if out == "" || strings.Trim(out, "_") == "" {
		return fallbackFilename
	}
	return out
}

func filenameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
		r == '.' || r == '_' || r == ' ' || r == '-'
}
