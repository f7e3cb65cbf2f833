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
	start, end         int32 // byte offsets in the text of the pages joined by pageBreak
	runeStart, runeEnd int32 // rune offsets in that text
	page               int32 // index of the page in the input
	before             level // boundary between this atom and the previous
}

// doc is the input, cut into atoms as the splitter asks for them: it
// holds the atoms from the first it may still need (base) to the last
// scanned, so that its memory does not grow with the input, and the text
// stays in the pages.
type doc struct {
	pages []Page
	unit  Unit
	piece int // longest atom, in runes
	atoms []atom
	base  int // index of atoms[0]
	// pageBase is the offset of each page's text in the joined text, -1
	// for a page with no words (it is left out, with its break).
	pageBase []int
	total    int // bytes of the joined text
	sc       scanner
}

// scanner is where scanning stands: page p, byte i of its text.
type scanner struct {
	p, i     int
	runes    int // rune offset of byte i in the joined text
	newlines int
	gap      bool
	prev     string // the previous word on this page
	done     bool   // every page scanned
}

// scan prepares pages for splitting; the atoms are cut as they are needed.
func scan(pages []Page, cfg Config) *doc {
	d := &doc{pages: pages, unit: cfg.Unit, piece: cfg.Size, pageBase: make([]int, len(pages))}
	if cfg.Unit == Words {
		d.piece = wordPiece
	}
	for i, p := range pages {
		d.pageBase[i] = -1
		if strings.TrimFunc(p.Text, isSpace) == "" {
			continue // nothing to scan; no break to add either
		}
		if d.total > 0 {
			d.total += len(pageBreak)
		}
		d.pageBase[i] = d.total
		d.total += len(p.Text)
	}
	d.sc.p = -1
	d.nextPage()
	return d
}

// nextPage moves the scanner to the next page with words.
func (d *doc) nextPage() {
	sc := &d.sc
	if sc.p >= 0 {
		sc.runes += len(pageBreak) // before the next page, if there is one
	}
	for sc.p++; sc.p < len(d.pages) && d.pageBase[sc.p] < 0; sc.p++ {
	}
	sc.i, sc.newlines, sc.gap, sc.prev = 0, 0, false, ""
	sc.done = sc.p >= len(d.pages)
}

// has reports whether atom i exists, scanning up to it.
func (d *doc) has(i int) bool {
	for i-d.base >= len(d.atoms) {
		if !d.step() {
			return false
		}
	}
	return true
}

// at returns atom i, which has been checked to exist (has).
func (d *doc) at(i int) *atom { return &d.atoms[i-d.base] }

// drop forgets the atoms before i.
func (d *doc) drop(i int) {
	if n := i - d.base; n > 0 && n <= len(d.atoms) {
		d.atoms = append(d.atoms[:0], d.atoms[n:]...)
		d.base = i
	}
}

// step scans up to the next word and appends its atoms; it reports false
// at the end of the input.
func (d *doc) step() bool {
	sc := &d.sc
	for !sc.done {
		s := d.pages[sc.p].Text
		for sc.i < len(s) {
			r, w := utf8.DecodeRuneInString(s[sc.i:])
			if isSpace(r) {
				if r == '\n' || r == '\f' || r == '\u2029' {
					sc.newlines++
					if r != '\n' {
						sc.newlines++
					}
				}
				sc.gap = true
				sc.i += w
				sc.runes++
				continue
			}
			end, n := wordEnd(s, sc.i)
			lv := levelWord
			switch {
			case sc.prev == "" || sc.newlines >= 2:
				lv = levelParagraph
			case endsSentence(sc.prev, sc.gap, r):
				lv = levelSentence
			}
			sc.prev = s[sc.i:end]
			base, page := d.pageBase[sc.p], int32(sc.p)
			if n <= d.piece {
				d.atoms = append(d.atoms, atom{
					start: int32(base + sc.i), end: int32(base + end),
					runeStart: int32(sc.runes), runeEnd: int32(sc.runes + n),
					page: page, before: lv,
				})
			} else {
				d.addWord(sc.prev, base+sc.i, sc.runes, page, lv)
			}
			sc.i, sc.runes = end, sc.runes+n
			sc.newlines, sc.gap = 0, false
			return true
		}
		d.nextPage()
	}
	return false
}

// text returns the joined text of atoms first to last: a substring of a
// page when they are on one.
func (d *doc) text(first, last *atom) string {
	p1, p2 := int(first.page), int(last.page)
	from, to := int(first.start)-d.pageBase[p1], int(last.end)-d.pageBase[p2]
	if p1 == p2 {
		return d.pages[p1].Text[from:to]
	}
	var b strings.Builder
	b.Grow(int(last.end - first.start))
	b.WriteString(d.pages[p1].Text[from:])
	for p := p1 + 1; p < p2; p++ {
		if d.pageBase[p] >= 0 {
			b.WriteString(pageBreak)
			b.WriteString(d.pages[p].Text)
		}
	}
	b.WriteString(pageBreak)
	b.WriteString(d.pages[p2].Text[:to])
	return b.String()
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
