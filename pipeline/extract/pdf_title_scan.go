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
func titleUnread(data []byte) string {
	switch {
	case longString(data, MaxPDFStringBytes):
		return fmt.Sprintf("a string over %d bytes", MaxPDFStringBytes)
	case longTitle(data, titleCheckBytes):
		return fmt.Sprintf("its string is over %d bytes", titleCheckBytes)
	}
	return objStmTitle(data, titleCheckBytes, titleRefs(data))
}

// longTitle reports whether data holds a /Title whose string is longer than limit bytes: a
// literal or hex string right after the key, or the string an indirect reference after the
// key names ("/Title 12 0 R" and "12 0 obj (…) endobj"). The key is matched as PDF reads
// names: "/Ti#74le" is /Title as well. Outline items and annotations have
// /Title keys too; a long one of those stops the document's title being read as well, which
// costs nothing that matters.
func longTitle(data []byte, limit int) bool {
	refs := titleRefs(data)
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

// titleRefs returns the objects that /Title keys refer to ("/Title 12 0 R"), at most a few
// thousand of them.
func titleRefs(data []byte) map[objRef]bool {
	refs := map[objRef]bool{}
	for i := 0; len(refs) < 4096; {
		at := bytes.IndexByte(data[i:], '/')
		if at < 0 {
			break
		}
		start := i + at
		for i = start + 1; i < len(data) && isRegular(data[i]); i++ {
		}
		if !isTitleKey(data[start:i]) {
			continue
		}
		rest := bytes.TrimLeft(data[i:min(len(data), i+64)], pdfSpace)
		f := bytes.Fields(rest)
		if len(f) < 3 || !bytes.HasPrefix(f[2], []byte("R")) {
			continue
		}
		num, err1 := strconv.Atoi(string(f[0]))
		gen, err2 := strconv.Atoi(string(f[1]))
		if err1 == nil && err2 == nil {
			refs[objRef{num, gen}] = true
		}
	}
	return refs
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
