package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Normalize returns s in the canonical form every extractor produces:
//
//   - Unicode NFKC (ligatures split, full-width forms folded, NBSP → space);
//   - line breaks unified to "\n" (CR LF, CR, U+2028; U+2029 and form feed become a paragraph
//     break); other control characters, soft hyphens and zero-width characters dropped;
//   - runs of spaces and tabs collapsed to one space, lines trimmed;
//   - a word hyphenated across a line break joined ("exam-\nple" → "example") when the next line
//     starts with a lower-case letter;
//   - paragraph breaks (one or more blank lines) kept as exactly one blank line, none at the ends.
//
// Invalid UTF-8 is replaced by U+FFFD. Normalize is idempotent.
func Normalize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = norm.NFKC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	blank := false // a paragraph break is pending
	emit := func(line string) {
		if b.Len() > 0 {
			if blank {
				b.WriteString("\n\n")
			} else {
				b.WriteByte('\n')
			}
		}
		blank = false
		b.WriteString(line)
	}
	// pending is the last line, held back until the next shows whether
	// it completes a hyphenated word; lines come one at a time, so that
	// only the input and the output are whole in memory.
	pending := ""
	eachLine(s, func(line string) {
		switch {
		case pending != "" && joinsHyphen(pending, line):
			pending = pending[:len(pending)-1] + line
			return
		case pending != "":
			emit(pending)
			pending = ""
		}
		if line == "" {
			blank = b.Len() > 0
			return
		}
		pending = line
	})
	if pending != "" {
		emit(pending)
	}
	out := b.String()
	if !norm.NFKC.IsNormalString(out) { // a joined hyphenation can meet a combining mark
		out = norm.NFKC.String(out)
	}
	return out
}

// eachLine cleans s and cuts it into trimmed lines with collapsed inner whitespace, passed to
// yield in order; a paragraph separator yields an empty line.
func eachLine(s string, yield func(line string)) {
	var (
		cur   strings.Builder
		space bool // a space is pending inside the current line
	)
	flush := func() {
		yield(cur.String())
		cur.Reset()
		space = false
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '\r':
			if i < len(s) && s[i] == '\n' {
				i++
			}
			flush()
		case r == '\n' || r == '\u2028' || r == '\u0085':
			flush()
		case r == '\f' || r == '\u2029':
			flush()
			flush()
		case r == '\x02':
			// PDFium marks a hyphen generated at a line end with U+0002.
			cur.WriteByte('-')
		case unicode.IsSpace(r):
			space = cur.Len() > 0
		case dropRune(r):
		default:
			if space {
				cur.WriteByte(' ')
				space = false
			}
			cur.WriteRune(r)
		}
	}
	flush()
}

// dropRune reports whether r is invisible noise: a control or format character (soft hyphen,
// zero-width space and joiners, BOM, bidi controls) or a noncharacter.
func dropRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\uFFFE' || r == '\uFFFF'
}

// joinsHyphen reports whether line ends in a word broken by a hyphen that next completes.
func joinsHyphen(line, next string) bool {
	if len(line) < 2 || line[len(line)-1] != '-' || next == "" {
		return false
	}
	before, _ := utf8.DecodeLastRuneInString(line[:len(line)-1])
	first, _ := utf8.DecodeRuneInString(next)
	return unicode.IsLetter(before) && unicode.IsLower(first)
}

// titleRaw is how much of a title is kept before normalisation: room for
// white space that normalising removes.
const titleRaw = 4 * MaxTitleBytes

// capWrite appends p to b while b holds less than titleRaw bytes.
func capWrite(b *strings.Builder, p []byte) {
	if room := titleRaw - b.Len(); room > 0 {
		b.Write(p[:min(len(p), room)])
	}
}

// capTitle normalises a title and cuts it to MaxTitleBytes.
func capTitle(s string) string {
	return Truncate(Normalize(Truncate(s, titleRaw-utf8.UTFMax)), MaxTitleBytes)
}

// Truncate returns s cut to at most n bytes on a rune boundary.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
