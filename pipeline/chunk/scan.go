package chunk

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// pageBreak joins pages in the document text; it reads as a paragraph break.
const pageBreak = "\n\n"

// wordPiece is, in Words mode, the longest piece of a word counted as one
// word: a longer run (a URL, a base64 blob) counts as one word per piece.
const wordPiece = 32

// level is the strength of the boundary before an atom.
type level uint8

const (
	levelChar      level = iota // inside a word too long to keep whole
	levelWord                   // a space, or between two CJK characters
	levelSentence               // after the end of a sentence
	levelParagraph              // a blank line or a page break
)

// atom is the smallest piece a chunk is made of: a word, a CJK character
// with its trailing punctuation, or a piece of an overlong word.
type atom struct {
	start, end         int32 // byte offsets in doc.text
	runeStart, runeEnd int32 // rune offsets in doc.text
	page               int32 // index of the page in the input
	before             level // boundary between this atom and the previous
}

// doc is the scanned input: all pages joined, cut into atoms.
type doc struct {
	text  string
	atoms []atom
	unit  Unit
	piece int // longest atom, in runes
}

// scan joins pages and cuts the text into atoms.
func scan(pages []Page, cfg Config) *doc {
	d := &doc{unit: cfg.Unit, piece: cfg.Size}
	if cfg.Unit == Words {
		d.piece = wordPiece
	}
	var b strings.Builder
	n := 0
	for _, p := range pages {
		n += len(p.Text) + len(pageBreak)
	}
	b.Grow(n)
	d.atoms = make([]atom, 0, n/6+1)
	runes := 0
	for i, p := range pages {
		if strings.TrimFunc(p.Text, isSpace) == "" {
			continue // nothing to scan; no break to add either
		}
		if b.Len() > 0 {
			b.WriteString(pageBreak)
			runes += len(pageBreak)
		}
		base := b.Len()
		b.WriteString(p.Text)
		runes = d.scanPage(p.Text, base, runes, int32(i))
	}
	d.text = b.String()
	return d
}

// scanPage appends the atoms of one page's text s, which starts at byte
// base and rune runeBase of the document, and returns the rune offset after
// it.
func (d *doc) scanPage(s string, base, runeBase int, page int32) int {
	newlines, gap := 0, false
	prev := "" // the previous word on this page
	r0 := runeBase
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if isSpace(r) {
			if r == '\n' || r == '\f' || r == '\u2029' {
				newlines++
				if r != '\n' {
					newlines++
				}
			}
			gap = true
			i += w
			r0++
			continue
		}
		end, n := wordEnd(s, i)
		lv := levelWord
		switch {
		case prev == "" || newlines >= 2:
			lv = levelParagraph
		case endsSentence(prev, gap, r):
			lv = levelSentence
		}
		prev = s[i:end]
		if n <= d.piece {
			d.atoms = append(d.atoms, atom{
				start: int32(base + i), end: int32(base + end),
				runeStart: int32(r0), runeEnd: int32(r0 + n),
				page: page, before: lv,
			})
		} else {
			d.addWord(prev, base+i, r0, page, lv)
		}
		i, r0 = end, r0+n
		newlines, gap = 0, false
	}
	return r0
}

// wordEnd returns the end of the word starting at s[i] and its length in
// runes. A CJK character is a word by itself, with any marks and
// punctuation that follow it; other words end at a space or a CJK character.
func wordEnd(s string, i int) (end, runes int) {
	r, w := utf8.DecodeRuneInString(s[i:])
	cjk := isCJK(r)
	end, runes = i+w, 1
	for end < len(s) {
		r, w = rune(s[end]), 1
		if r >= utf8.RuneSelf {
			r, w = utf8.DecodeRuneInString(s[end:])
		}
		if r < utf8.RuneSelf && !cjk {
			if isSpace(r) {
				break
			}
			end++
			runes++
			continue
		}
		if isSpace(r) || isCJK(r) {
			break
		}
		if cjk && !unicode.IsMark(r) && !unicode.IsPunct(r) {
			break
		}
		end += w
		runes++
	}
	return end, runes
}

// addWord appends a word as one atom, or as several if it is longer than
// d.piece runes.
func (d *doc) addWord(w string, start, runeStart int, page int32, lv level) {
	for w != "" {
		n, cut := pieceLen(w, d.piece)
		d.atoms = append(d.atoms, atom{
			start: int32(start), end: int32(start + cut),
			runeStart: int32(runeStart), runeEnd: int32(runeStart + n),
			page: page, before: lv,
		})
		w, start, runeStart, lv = w[cut:], start+cut, runeStart+n, levelChar
	}
}

// pieceLen returns how many runes and bytes of w make its first piece: all
// of w if it has at most max runes, otherwise the longest prefix of at most
// max runes that does not separate a character from its combining marks
// (or exactly max runes if there is none).
func pieceLen(w string, limit int) (runes, bytes int) {
	lastRunes, lastBytes := 0, 0
	for i, r := range w {
		if runes == limit {
			if lastBytes == 0 || !joinsPrevious(r) {
				return runes, i
			}
			return lastRunes, lastBytes
		}
		if !joinsPrevious(r) {
			lastRunes, lastBytes = runes, i
		}
		runes++
	}
	return runes, len(w)
}

// joinsPrevious reports whether r belongs to the character before it:
// combining marks, joiners, variation selectors and skin-tone modifiers.
func joinsPrevious(r rune) bool {
	return unicode.IsMark(r) || r == '\u200d' || r == '\u200c' ||
		(r >= 0x1F3FB && r <= 0x1F3FF)
}

// endsSentence reports whether a word ending in prev, followed (after a
// space if gap) by a word starting with next, closes a sentence. A full
// stop needs a space after it and a word that does not start in lower case,
// so that "e.g. this" stays one sentence.
func endsSentence(prev string, gap bool, next rune) bool {
	r, n := utf8.DecodeLastRuneInString(prev)
	for isCloser(r) && n < len(prev) {
		prev = prev[:len(prev)-n]
		r, n = utf8.DecodeLastRuneInString(prev)
	}
	switch r {
	case '。', '！', '？', '｡':
		return true
	case '!', '?', '…':
		return gap
	case '.':
		return gap && !unicode.IsLower(next)
	}
	return false
}

// isCloser reports whether r closes a quotation or a parenthesis.
func isCloser(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '}', '»', '”', '’', '」', '』', '）':
		return true
	}
	return false
}

// isSpace reports whether r separates words.
func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || '\t' <= r && r <= '\r'
	}
	return unicode.IsSpace(r) || r == '\u200b' || r == '\ufeff'
}

// isCJK reports whether r is written without spaces between words: Han,
// Hiragana and Katakana (with its prolonged sound mark).
func isCJK(r rune) bool {
	if r < 0x2e80 {
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) || r == 'ー'
}
