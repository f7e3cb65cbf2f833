package extract

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// Object streams (PDF 1.5) hold objects compressed together, out of sight of the checks on the
// file's bytes (longString, longTitle). A /Title there was read whole: a 30 MB one, 200 KB in
// the file, held the engine until the parse deadline and cost the process 380 MiB; one of 1 GiB
// (7 MB in the file) 540 MiB. So the title check reads object streams too, as they inflate, a
// buffer at a time, and applies the same bound: a string after a /Title key, or the value of
// an object a /Title key refers to (found through the stream's table of offsets), that is over
// the bound as written stops the title being read. Nothing of a stream is kept but its table.

const (
	// maxObjStmDecoded bounds the bytes of object streams the title check inflates per
	// document; a document whose object streams hold more does not have its title read.
	maxObjStmDecoded = 64 << 20
	// maxObjStmObjects bounds the objects one object stream may list for the check to read it.
	maxObjStmObjects = 1 << 16
)

// errObjStmUnchecked marks an object stream the check cannot read: a filter other than
// FlateDecode, a table it cannot trust, more than maxObjStmDecoded in all.
var errObjStmUnchecked = errors.New("object stream not checked")

// objStmTitle says why the title of the PDF in data is not read on account of its object
// streams ("" when nothing there stops it): a /Title string over s's limit, or a stream the
// check cannot read. s starts with the objects /Title keys outside object streams refer to,
// and ends with what the streams add. In an encrypted document the streams' data is
// encrypted: a stream that does not inflate is left to the engine (its memory cap and the
// parse deadline), as are all before this check.
func objStmTitle(data []byte, s *titleScan) string {
	if !bytes.Contains(data, []byte("ObjStm")) {
		return ""
	}
	limit := s.limit
	encrypted := bytes.Contains(data, []byte("/Encrypt"))
	var zr io.ReadCloser
	buf := make([]byte, 16<<10)
	budget := int64(maxObjStmDecoded)
	var err error
	objStreams(data, func(d objStmDict, body []byte) bool {
		if !d.flate {
			if !encrypted {
				err = fmt.Errorf("%w: %s", errObjStmUnchecked, d.why)
			}
			return encrypted
		}
		if zr == nil {
			zr, err = zlib.NewReader(bytes.NewReader(body))
		} else {
			err = zr.(zlib.Resetter).Reset(bytes.NewReader(body), nil)
		}
		if err != nil { // PDFium cannot inflate it either (or it is encrypted)
			zr, err = nil, nil
			return true
		}
		err = s.stream(zr, d, buf, &budget)
		if err != nil && (encrypted || !errors.Is(err, errObjStmUnchecked)) {
			// A truncated or corrupt stream: what inflated is what PDFium sees too. In an
			// encrypted document, data that happened to pass for zlib.
			err = nil
		}
		return err == nil && !s.long()
	})
	switch {
	case s.long():
		return fmt.Sprintf("its string in an object stream is over %d bytes", limit)
	case err != nil:
		return err.Error()
	}
	return ""
}

// objStmDict is what the check needs of an object stream's dictionary.
type objStmDict struct {
	n, first int
	flate    bool   // FlateDecode alone, or no filter
	why      string // what else, as written, for the message
}

// objStreams calls fn with the dictionary and the data (to the end of the file: a zlib stream
// ends itself) of every stream whose dictionary says /Type /ObjStm, in order, until fn returns
// false. A stream's data starts at the line after its keyword, as PDFium reads it. Stream data
// is not skipped: PDFium finds objects by their offsets, not by reading the file through, so a
// stream whose end is hard to find must not hide the next one.
func objStreams(data []byte, fn func(d objStmDict, body []byte) bool) {
	prev := 0
	for at := 0; ; {
		i := bytes.Index(data[at:], []byte("stream"))
		if i < 0 {
			return
		}
		i += at
		at = i + len("stream")
		if !bytes.HasSuffix(bytes.TrimRight(data[prev:i], pdfSpace), []byte(">>")) {
			continue // not the keyword after a stream's dictionary ("endstream" among others)
		}
		start := at
		if eol := bytes.IndexAny(data[start:], "\r\n"); eol >= 0 { // the next line
			start += eol + 1
			if data[start-1] == '\r' && start < len(data) && data[start] == '\n' {
				start++
			}
		}
		if d, ok := parseObjStmDict(data[dictStart(data, prev, i):i]); ok && !fn(d, data[start:]) {
			return
		}
		prev = at
	}
}

// dictStart returns where the dictionary of the stream whose keyword is at data[i] starts:
// after the last "N G obj" between from and i.
func dictStart(data []byte, from, i int) int {
	for end := i; end > from; {
		at := bytes.LastIndex(data[from:end], []byte("obj"))
		if at < 0 {
			break
		}
		at += from
		if _, ok := objectHeader(bytes.TrimRight(data[from:at+3], pdfSpace)); ok {
			return at + 3
		}
		end = at
	}
	return from
}

// parseObjStmDict reads the top-level entries of a stream dictionary that matter here and
// reports whether it is an object stream's.
func parseObjStmDict(dict []byte) (objStmDict, bool) {
	d := objStmDict{n: -1, first: -1, flate: true}
	isObjStm, depth, filters := false, 0, 0
	key := "" // the key at the top level whose value comes next
	for tok, rest := pdfToken(dict); tok != nil; tok, rest = pdfToken(rest) {
		switch t := string(tok); {
		case t == "<<" || t == "[":
			if depth++; depth == 2 && (key == "DecodeParms" || key == "Filter" && t == "<<") {
				d.unsupported("/" + key + " " + t + "…")
			}
			continue
		case t == ">>" || t == "]":
			if depth--; depth == 1 {
				key = ""
			}
			continue
		case depth == 2 && key == "Filter": // an array of filters
			filters++
			d.filterName(tok, filters)
			continue
		case depth != 1:
			continue
		case key == "":
			key = pdfName(tok)
			continue
		case objStmKeys[key] && refAhead(tok, rest): // a value the check would have to look up
			isObjStm = isObjStm || key == "Type"
			d.unsupported("/" + key + " " + string(tok) + " … R")
		case key == "Type":
			isObjStm = pdfName(tok) == "ObjStm"
		case key == "N":
			d.n = atoiOr(tok, -1)
		case key == "First":
			d.first = atoiOr(tok, -1)
		case key == "Filter":
			d.filterName(tok, 1)
		case key == "DecodeParms" && t != "null":
			d.unsupported("/DecodeParms " + t)
		}
		key = ""
	}
	return d, isObjStm
}

// objStmKeys are the entries of an object stream's dictionary the check reads.
var objStmKeys = map[string]bool{"Type": true, "N": true, "First": true, "Filter": true, "DecodeParms": true}

// refAhead reports whether tok and the tokens in rest make a reference "N G R".
func refAhead(tok, rest []byte) bool {
	gen, rest := pdfToken(rest)
	r, _ := pdfToken(rest)
	return atoiOr(tok, -1) >= 0 && atoiOr(gen, -1) >= 0 && string(r) == "R"
}

// filterName notes the i-th filter (from 1): the check inflates FlateDecode alone.
func (d *objStmDict) filterName(tok []byte, i int) {
	if name := pdfName(tok); i > 1 || name != "FlateDecode" && name != "Fl" {
		d.unsupported("filter " + string(tok))
	}
}

func (d *objStmDict) unsupported(why string) { d.flate, d.why = false, why }

// pdfToken returns the first token of b ("<<", ">>", "[", "]", a name, a string, a number or
// keyword) and what follows it, or nil at the end. Comments are skipped.
func pdfToken(b []byte) (tok, rest []byte) {
	i := 0
	for i < len(b) && (bytes.IndexByte([]byte(pdfSpace), b[i]) >= 0 || b[i] == '%') {
		if b[i] == '%' {
			for i < len(b) && b[i] != '\n' && b[i] != '\r' {
				i++
			}
			continue
		}
		i++
	}
	if i == len(b) {
		return nil, nil
	}
	b = b[i:]
	end := 1
	switch c := b[0]; {
	case bytes.HasPrefix(b, []byte("<<")), bytes.HasPrefix(b, []byte(">>")):
		end = 2
	case c == '(':
		end = literalEnd(b, 0)
	case c == '<':
		if j := bytes.IndexByte(b, '>'); j >= 0 {
			end = j + 1
		} else {
			end = len(b)
		}
	case c == '/' || isRegular(c):
		for end < len(b) && isRegular(b[end]) {
			end++
		}
	}
	return b[:end], b[end:]
}

// pdfName decodes a name token ("/Obj#53tm" is /ObjStm), without its slash; "" if tok is no
// name.
func pdfName(tok []byte) string {
	if len(tok) == 0 || tok[0] != '/' {
		return ""
	}
	out := make([]byte, 0, len(tok))
	for i := 1; i < len(tok); i++ {
		c := tok[i]
		if c == '#' && i+2 < len(tok) && isHex(tok[i+1]) && isHex(tok[i+2]) {
			c = unhex(tok[i+1])<<4 | unhex(tok[i+2])
			i += 2
		}
		out = append(out, c)
	}
	return string(out)
}

// isRegular reports whether c is a regular character: not white space or a delimiter.
func isRegular(c byte) bool {
	switch c {
	case 0, '\t', '\n', '\f', '\r', ' ', '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return false
	}
	return true
}

func atoiOr(tok []byte, or int) int {
	n, err := strconv.Atoi(string(tok))
	if err != nil {
		return or
	}
	return n
}

// objOffset is one entry of an object stream's table: an object and where it starts, after
// /First.
type objOffset struct{ num, off int }

// stream reads one object stream from r: its table, then its objects, until the data ends,
// a /Title string is found over the bound, or the budget of decoded bytes is spent.
func (s *titleScan) stream(r io.Reader, d objStmDict, buf []byte, budget *int64) error {
	if d.n < 0 || d.first < 0 || d.n > maxObjStmObjects {
		return fmt.Errorf("%w: /N %d /First %d", errObjStmUnchecked, d.n, d.first)
	}
	s.reset()
	h := tableParse{want: 2 * d.n}
	var offs []objOffset
	tabled := false
	pos := 0 // decoded bytes so far
	for {
		n, err := r.Read(buf)
		if *budget -= int64(n); *budget < 0 {
			return fmt.Errorf("%w: object streams inflate to over %d bytes", errObjStmUnchecked, maxObjStmDecoded)
		}
		for b := buf[:n]; len(b) > 0; {
			if pos < d.first { // the table
				k := min(len(b), d.first-pos)
				for _, c := range b[:k] {
					h.step(c)
				}
				b, pos = b[k:], pos+k
				continue
			}
			if !tabled {
				if offs, tabled = h.table(), true; offs == nil {
					return fmt.Errorf("%w: its table lists fewer than %d objects", errObjStmUnchecked, d.n)
				}
			}
			for len(offs) > 0 && offs[0].off+d.first == pos {
				if !s.objectAt(offs[0].num, b[0]) {
					return fmt.Errorf("%w: object %d starts inside another token", errObjStmUnchecked, offs[0].num)
				}
				offs = offs[1:]
			}
			end := len(b)
			if len(offs) > 0 {
				end = min(end, offs[0].off+d.first-pos) // runs stop at the next object
			}
			k := s.run(b[:end])
			if k == 0 {
				s.step(b[0])
				k = 1
			}
			b, pos = b[k:], pos+k
			if s.long() {
				return nil
			}
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// tableParse reads an object stream's table: pairs of integers, object number and offset.
type tableParse struct {
	want  int
	ints  []int
	cur   int
	digit bool
	bad   bool
}

func (t *tableParse) step(c byte) {
	switch {
	case t.bad || len(t.ints) == t.want:
	case '0' <= c && c <= '9':
		t.cur = min(t.cur*10+int(c-'0'), 1<<40)
		t.digit = true
	case bytes.IndexByte([]byte(pdfSpace), c) >= 0:
		t.flush()
	default:
		t.bad = true
	}
}

func (t *tableParse) flush() {
	if t.digit && len(t.ints) < t.want {
		t.ints = append(t.ints, t.cur)
	}
	t.cur, t.digit = 0, false
}

// table returns the entries sorted by offset, or nil if fewer than want integers were read.
func (t *tableParse) table() []objOffset {
	if !t.bad {
		t.flush()
	}
	if len(t.ints) < t.want {
		return nil
	}
	offs := make([]objOffset, 0, t.want/2+1)
	for i := 0; i+1 < len(t.ints); i += 2 {
		offs = append(offs, objOffset{num: t.ints[i], off: t.ints[i+1]})
	}
	slices.SortStableFunc(offs, func(a, b objOffset) int { return a.off - b.off })
	return offs
}
