package analyze

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// isCJK reports whether r belongs to a script written without spaces
// between words (Han, Hiragana, Katakana): each character counts as a word.
func isCJK(r rune) bool {
	return r >= 0x2e80 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// isWordRune reports whether r can be part of a word.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// countWords counts the words of s: runs of non-space characters holding a
// letter or digit, plus each CJK character.
// It stops early, with a partial count, if st stops.
func countWords(st *stopper, s string) int {
	n := 0
	inRun, counted := false, false
	for _, r := range s {
		if st.stop() {
			return n
		}
		switch {
		case unicode.IsSpace(r):
			inRun, counted = false, false
		case isCJK(r):
			n++
			inRun, counted = false, false
		default:
			if !inRun {
				inRun, counted = true, false
			}
			if !counted && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
				n++
				counted = true
			}
		}
	}
	return n
}

// token is a word of the text, or a break between phrases.
type token struct {
	word   string // lower-case word; "" for a break
	alpha  bool   // the word has a letter
	digits bool   // the word has a digit
}

// tokenize cuts s into lower-case words and breaks. A word is a run of
// letters, digits and marks, with single inner hyphens kept
// ("state-of-the-art"); an apostrophe ends a word, so the elided article of
// "l'homme" is a word of its own. Punctuation, line ends, tabs and runs of
// spaces (table columns) are breaks. It stops when yield returns false or
// st stops, and reports whether it read s to its end.
func tokenize(st *stopper, s string, yield func(token) bool) bool {
	start := -1
	for i := 0; i < len(s); {
		if st.stop() {
			return false
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case isWordRune(r) && !isCJK(r):
			if start < 0 {
				start = i
			}
		case start >= 0 && r == '-' && i+w < len(s) && nextIsLetter(s[i+w:]):
			// inner hyphen: stay in the word
		default:
			if start >= 0 && !yield(newToken(s[start:i])) {
				return false
			}
			start = -1
			if (!unicode.IsSpace(r) || r != ' ' || i+w < len(s) && s[i+w] == ' ') && !yield(token{}) {
				return false
			}
		}
		i += w
	}
	return start < 0 || yield(newToken(s[start:]))
}

func nextIsLetter(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r)
}

func newToken(w string) token {
	t := token{word: toLower(w)}
	for _, r := range w {
		t.alpha = t.alpha || unicode.IsLetter(r)
		t.digits = t.digits || unicode.IsDigit(r)
	}
	return t
}

// toLower lower-cases w, without allocating when it is already.
func toLower(w string) string {
	for _, r := range w {
		if unicode.IsUpper(r) || unicode.IsTitle(r) {
			return strings.ToLower(w)
		}
	}
	return w
}
