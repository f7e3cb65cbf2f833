package extract

import (
	"bytes"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// textEncoding is the encoding of a text file: what people's files are
// in, besides UTF-8. The zero value is UTF-8.
type textEncoding struct {
	name string            // "" for UTF-8
	enc  encoding.Encoding // nil for UTF-8
}

var (
	encUTF16LE = textEncoding{"UTF-16LE", unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)}
	encUTF16BE = textEncoding{"UTF-16BE", unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)}
	// Windows-1252 is a superset of Latin-1's printable characters: it
	// reads both, and what Windows writes.
	encWindows1252 = textEncoding{"Windows-1252", charmap.Windows1252}
)

// detectText returns the encoding of b, the start of a file (cut anywhere
// when truncated) or all of it, and reports whether b is text at all:
//
//   - a byte-order mark decides (UTF-8, UTF-16LE, UTF-16BE);
//   - UTF-16 without one is recognised by its zero bytes: at least a
//     quarter of the code units have a zero high byte, on one side only;
//   - UTF-8 is UTF-8 (a rune cut by the end of a truncated b is valid),
//     also with a few invalid bytes among more valid multi-byte runes
//     (they become U+FFFD);
//   - other bytes are Windows-1252 (Latin-1 included).
//
// Text has no NUL or other C0 control bytes than tab, newline, carriage
// return and form feed, and no DEL, once decoded: anything else is binary.
func detectText(b []byte, truncated bool) (textEncoding, bool) {
	switch {
	case bytes.HasPrefix(b, []byte("\xef\xbb\xbf")):
		return textEncoding{}, utf8Text(b[3:], truncated)
	case bytes.HasPrefix(b, []byte("\xff\xfe")):
		return encUTF16LE, utf16Text(b[2:], false)
	case bytes.HasPrefix(b, []byte("\xfe\xff")):
		return encUTF16BE, utf16Text(b[2:], true)
	}
	if enc, ok := utf16Guess(b); ok {
		return enc, utf16Text(b, enc.name == encUTF16BE.name)
	}
	multi, bad, ok := scanUTF8(b, truncated)
	switch {
	case !ok:
		return textEncoding{}, false
	case bad == 0 || multi > bad:
		return textEncoding{}, true
	}
	return encWindows1252, true
}

// control reports whether c is a C0 control that text does not hold, or DEL.
func control(c byte) bool {
	return c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' || c == 0x7f
}

// utf8Text reports whether b is text in UTF-8: no control bytes, and no
// invalid bytes but a rune cut by the end of a truncated b.
func utf8Text(b []byte, truncated bool) bool {
	_, bad, ok := scanUTF8(b, truncated)
	return ok && bad == 0
}

// scanUTF8 counts b's valid multi-byte runes and its bytes that are not
// UTF-8 (a rune cut by the end of a truncated b is neither), and reports
// whether b has no control bytes.
func scanUTF8(b []byte, truncated bool) (multi, bad int, ok bool) {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if control(c) {
				return multi, bad, false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r != utf8.RuneError || size > 1:
			multi++
		case truncated && !utf8.FullRune(b[i:]) && validPrefix(b[i:]):
			return multi, bad, true
		default:
			bad++
		}
		i += size
	}
	return multi, bad, true
}

// validPrefix reports whether b, shorter than a rune, can start one: a
// lead byte and continuation bytes only.
func validPrefix(b []byte) bool {
	if len(b) == 0 || b[0] < 0xc2 || b[0] > 0xf4 {
		return false
	}
	for _, c := range b[1:] {
		if c&0xc0 != 0x80 {
			return false
		}
	}
	return true
}

// utf16Guess recognises UTF-16 without a byte-order mark: text in a Latin
// script has a zero high byte in most code units, on one side; other
// scripts have none. At least a quarter of at least eight units must have it.
func utf16Guess(b []byte) (textEncoding, bool) {
	n := len(b) / 2
	if n < 8 {
		return textEncoding{}, false
	}
	even, odd := 0, 0
	for i := 0; i+1 < len(b); i += 2 {
		if b[i] == 0 && b[i+1] != 0 {
			even++
		}
		if b[i+1] == 0 && b[i] != 0 {
			odd++
		}
	}
	switch {
	case odd*4 >= n && even == 0:
		return encUTF16LE, true
	case even*4 >= n && odd == 0:
		return encUTF16BE, true
	}
	return textEncoding{}, false
}

// utf16Text reports whether b, UTF-16 in the given byte order (a last odd
// byte ignored), holds no control characters.
func utf16Text(b []byte, bigEndian bool) bool {
	for i := 0; i+1 < len(b); i += 2 {
		hi, lo := b[i+1], b[i]
		if bigEndian {
			hi, lo = b[i], b[i+1]
		}
		if hi == 0 && control(lo) {
			return false
		}
	}
	return true
}

// toUTF8 returns data decoded to UTF-8 from enc (data itself for UTF-8),
// without a byte-order mark. Bytes that do not decode become U+FFFD.
func toUTF8(data []byte, enc textEncoding) []byte {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if enc.enc == nil {
		return data
	}
	switch enc.name {
	case encUTF16LE.name:
		data = bytes.TrimPrefix(data, []byte("\xff\xfe"))
	case encUTF16BE.name:
		data = bytes.TrimPrefix(data, []byte("\xfe\xff"))
	}
	out, err := enc.enc.NewDecoder().Bytes(data)
	if err != nil { // the decoders replace what does not decode; an error is not expected
		return bytes.ToValidUTF8(data, []byte("\uFFFD"))
	}
	return out
}
