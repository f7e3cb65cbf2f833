package extract

import (
	"bytes"
	"fmt"
	"strconv"
)

// MaxPDFTitleStringBytes bounds the /Title string as written in the file: a PDF whose title is
// longer does not have its title read (a warning says so). PDFium hands a metadata string over
// only whole — parsed, widened to 4 bytes a character, converted to UTF-16 — so a title costs
// the engine about ten times its length, and its time grows faster: a title just under
// MaxPDFStringBytes (8 MiB) took the parse over its 20 s deadline and 100-130 MiB of memory.
// What is kept of a title is MaxTitleBytes, decoded from at most 4 × MaxTitleBytes of it, so a
// title string 16 times that is no title but a payload. Titles inside compressed object
// streams are checked as the streams inflate (objStmTitle).
const MaxPDFTitleStringBytes = 64 << 10

// titleCheckBytes is the title check's bound: MaxPDFTitleStringBytes, changed only by tests
// that need a title the check lets through.
var titleCheckBytes = MaxPDFTitleStringBytes

// titleUnread says why the title of the PDF in data is not read ("" when it is): a string
// over MaxPDFStringBytes anywhere outside streams, or a /Title string over
// MaxPDFTitleStringBytes, in the file's bytes or in an object stream.
//
// Nor is a title that refers to anything but a string: PDFium reads a stream named as a string
// as its decoded data, whole, and a reference may lead to one.
func titleUnread(data []byte) string {
	switch {
	case longString(data, MaxPDFStringBytes):
		return fmt.Sprintf("a string over %d bytes", MaxPDFStringBytes)
	case longTitle(data, titleCheckBytes):
		return fmt.Sprintf("its string is over %d bytes", titleCheckBytes)
	}
	refs, all := titleRefs(data)
	s := newTitleScan(titleCheckBytes, refs)
	if why := objStmTitle(data, s); why != "" {
		return why
	}
	return s.refsNotStrings(data, all)
}

// longTitle reports whether data holds a /Title whose string is longer than limit bytes: a
// literal or hex string right after the key, or the string an indirect reference after the
// key names ("/Title 12 0 R" and "12 0 obj (…) endobj"). The key is matched as PDF reads
// names: "/Ti#74le" is /Title as well. Outline items and annotations have
// /Title keys too; a long one of those stops the document's title being read as well, which
// costs nothing that matters.
func longTitle(data []byte, limit int) bool {
	refs, _ := titleRefs(data)
	long := false
	pdfStrings(data, func(start, end int) bool {
		if end-start <= limit {
			return true
		}
		before := bytes.TrimRight(data[:start], pdfSpace)
		if endsWithTitleKey(before) {
			long = true
			return false
		}
		if ref, ok := objectHeader(before); ok && refs[ref] {
			long = true
			return false
		}
		return true
	})
	return long
}

// pdfSpace is PDF's white space.
const pdfSpace = "\x00\t\n\f\r "

// objRef is an indirect object's number and generation.
type objRef struct{ num, gen int }

// isTitleKey reports whether the name token tok is /Title, written plainly or with #xx
// escapes ("/Ti#74le" is /Title too, to PDFium as to the specification).
func isTitleKey(tok []byte) bool {
	if bytes.IndexByte(tok, '#') < 0 {
		return string(tok) == "/Title"
	}
	return pdfName(tok) == "Title"
}

// endsWithTitleKey reports whether before ends with a /Title name token (escaped or not).
func endsWithTitleKey(before []byte) bool {
	i := len(before)
	for i > 0 && isRegular(before[i-1]) {
		i--
	}
	return i > 0 && before[i-1] == '/' && isTitleKey(before[i-1:])
}

// titleRefs returns the objects that /Title keys refer to ("/Title 12 0 R", with white space
// and comments between the tokens as PDF allows), and whether it found them all: not when
// there are over maxTitleRefs, or when a value it cannot tell from a reference within
// refLookahead bytes follows a key.
func titleRefs(data []byte) (refs map[objRef]bool, all bool) {
	refs, all = map[objRef]bool{}, true
	for i := 0; ; {
		at := bytes.IndexByte(data[i:], '/')
		if at < 0 {
			return refs, all
		}
		start := i + at
		for i = start + 1; i < len(data) && isRegular(data[i]); i++ {
		}
		if !isTitleKey(data[start:i]) {
			continue
		}
		ahead := data[i:min(len(data), i+refLookahead)]
		num, rest := pdfToken(ahead)
		switch {
		case num == nil:
			all = all && len(ahead) < refLookahead // the end of the data, or only space in sight
			continue
		case num[0] < '0' || num[0] > '9':
			continue // a string, a name, a dictionary, an array: no reference
		}
		gen, rest := pdfToken(rest)
		r, rest := pdfToken(rest)
		n, g := atoiOr(num, -1), atoiOr(gen, -1)
		switch {
		case n >= 0 && g >= 0 && string(r) == "R" && len(refs) < maxTitleRefs:
			refs[objRef{n, g}] = true
		case n >= 0 && g >= 0 && string(r) == "R", len(rest) == 0 && len(ahead) == refLookahead:
			all = false
		}
	}
}

// refLookahead is how far after a /Title key titleRefs reads its value.
const refLookahead = 1 << 10

// refsNotStrings says why the title is not read on account of what /Title keys refer to (""
// when nothing stops it): an object, as written in the file's bytes or in an object stream,
// whose value is not a string. all reports whether the /Title keys in the file's bytes were
// all read.
func (s *titleScan) refsNotStrings(data []byte, all bool) string {
	switch {
	case len(s.refs) == 0 && all:
		return ""
	case !all || s.refsLost:
		return fmt.Sprintf("its /Title keys refer to over %d objects or are unclear", maxTitleRefs)
	}
	for at := 0; ; {
		i := bytes.Index(data[at:], []byte("obj"))
		if i < 0 {
			break
		}
		i += at
		if at = i + len("obj"); at < len(data) && isRegular(data[at]) {
			continue
		}
		ref, ok := objectHeader(data[max(0, i-48):at])
		if ok && s.refs[ref.num] && !startsString(data[at:min(len(data), at+refLookahead)]) {
			return fmt.Sprintf("its /Title refers to object %d, which is not a string", ref.num)
		}
	}
	if s.numberedLost {
		return fmt.Sprintf("its object streams hold over %d numbers or references", maxTitleRefs)
	}
	for num := range s.refs {
		if s.numbered[num] {
			return fmt.Sprintf("its /Title refers to object %d, which is not a string", num)
		}
	}
	return ""
}

// startsString reports whether b starts, after white space and comments, with a literal or
// hex string.
func startsString(b []byte) bool {
	tok, _ := pdfToken(b)
	return len(tok) > 0 && (tok[0] == '(' || tok[0] == '<' && !bytes.HasPrefix(tok, []byte("<<")) && len(tok) > 1 && tok[len(tok)-1] == '>')
}

// objectHeader parses the "12 0 obj" that before ends with, if it does.
func objectHeader(before []byte) (objRef, bool) {
	if !bytes.HasSuffix(before, []byte("obj")) {
		return objRef{}, false
	}
	f := bytes.Fields(before[max(0, len(before)-48) : len(before)-len("obj")])
	if len(f) < 2 {
		return objRef{}, false
	}
	num, err1 := strconv.Atoi(string(f[len(f)-2]))
	gen, err2 := strconv.Atoi(string(f[len(f)-1]))
	if err1 != nil || err2 != nil {
		return objRef{}, false
	}
	return objRef{num, gen}, true
}

// pdfStrings calls fn with the bounds [start, end) of every literal "(…)" and hex "<…>"
// string outside stream data, in order, until fn returns false. Comments are skipped; an
// unterminated string runs to the end of the data.
func pdfStrings(data []byte, fn func(start, end int) bool) {
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == 's' && isStreamStart(data, i):
			end := bytes.Index(data[i:], []byte("endstream"))
			if end < 0 {
				return
			}
			i += end + len("endstream") - 1
		case c == '%':
			for i < len(data) && data[i] != '\n' && data[i] != '\r' {
				i++
			}
		case c == '(':
			end := literalEnd(data, i)
			if !fn(i, end) {
				return
			}
			i = end - 1
		case c == '<' && i+1 < len(data) && data[i+1] == '<':
			i++
		case c == '<':
			end := bytes.IndexByte(data[i:], '>')
			if end < 0 {
				end = len(data) - i - 1
			}
			if !fn(i, i+end+1) {
				return
			}
			i += end
		}
	}
}
