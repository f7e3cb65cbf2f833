// Package formdata streams a multipart/form-data body part by part, for
// uploads on the hot path.
//
// It parses what mime/multipart parses, with the same rules (preamble, the
// "\n"-only line endings some clients send, boundary lines with trailing
// white space, a boundary inside the data that is not followed by white
// space or "--"), and the differential fuzz test holds it to that. What it
// does differently is how it reads: mime/multipart reads through a 4 KiB
// buffer and hands out at most 4 KiB per Read, scanning for the boundary
// byte by byte; a Reader here reads the body in chunks as large as its
// buffer (256 KiB by default), finds the boundary with bytes.Index and
// hands out whole buffers, so a 10 MB file costs tens of read and write
// system calls instead of thousands.
//
// Two things are left out on purpose: a Content-Transfer-Encoding other
// than 7bit, 8bit or binary (mime/multipart decodes quoted-printable; RFC
// 7578 deprecates it for form data) is refused with ErrEncoding, and a
// part's header block must fit in the buffer and within the limit.
package formdata

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/textproto"
	"path/filepath"
	"strings"
)

// DefaultBufferSize is the buffer NewReader allocates when given none.
const DefaultBufferSize = 256 << 10

// minBufferSize keeps a boundary line and a small header block in the buffer.
const minBufferSize = 4 << 10

// Errors of a malformed or over-large body. Read errors of the underlying
// reader are returned as they are (io.ErrUnexpectedEOF for a body that ends
// early).
var (
	// ErrLimit: the parse went past the limit set with SetLimit.
	ErrLimit = errors.New("formdata: over the limit before the part")
	// ErrHeaderTooLarge: a part's header block (or a line before the first
	// part) does not fit in the buffer.
	ErrHeaderTooLarge = errors.New("formdata: part header larger than the buffer")
	// ErrEncoding: a part has a Content-Transfer-Encoding this package does
	// not decode.
	ErrEncoding = errors.New("formdata: unsupported Content-Transfer-Encoding")
	// ErrMalformed wraps every syntax error.
	ErrMalformed = errors.New("formdata: malformed multipart body")
)

// A Reader iterates over the parts of a multipart body.
type Reader struct {
	src  io.Reader
	buf  []byte
	r, w int   // unread bytes are buf[r:w]
	err  error // the source's first error (io.EOF included), sticky

	base  int64 // stream offset of buf[0]
	limit int64 // Offset may not pass it while parsing; < 0: none

	nl, nlDashBoundary, dashBoundary, dashBoundaryDash []byte

	cur       *Part
	partsRead int
}

// NewReader returns a Reader of the body r with the given boundary (the
// Content-Type's boundary parameter), reading through buf: nil means a new
// buffer of DefaultBufferSize, and one shorter than 4 KiB (or than four
// boundaries) is replaced by a new one of that size. A part's header block
// must fit in the buffer. The Reader uses buf until its caller is done
// with it and its parts, so a caller may take buf from a pool.
func NewReader(r io.Reader, boundary string, buf []byte) *Reader {
	if buf == nil {
		buf = make([]byte, DefaultBufferSize)
	}
	if need := max(minBufferSize, 4*(len(boundary)+6)); len(buf) < need {
		buf = make([]byte, need)
	}
	return newReader(r, boundary, buf)
}

func newReader(r io.Reader, boundary string, buf []byte) *Reader {
	b := []byte("\r\n--" + boundary + "--")
	return &Reader{
		src:              r,
		buf:              buf,
		limit:            -1,
		nl:               b[:2],
		nlDashBoundary:   b[:len(b)-2],
		dashBoundaryDash: b[2:],
		dashBoundary:     b[2 : len(b)-2],
	}
}

// Offset returns how many bytes of the body have been consumed: the
// preamble, the parts and headers read so far and what the current part's
// Read has returned.
func (mr *Reader) Offset() int64 { return mr.base + int64(mr.r) }

// SetLimit makes parsing fail with ErrLimit once Offset would pass n
// (n < 0: no limit). It bounds what a body may carry before the part the
// caller wants; reads of a part's data are bounded too.
func (mr *Reader) SetLimit(n int64) { mr.limit = n }

// room is how many more bytes may be consumed under the limit.
func (mr *Reader) room() int64 {
	if mr.limit < 0 {
		return 1<<63 - 1
	}
	return mr.limit - mr.Offset()
}

// fill reads once more into the buffer, moving the unread bytes to its
// front first. It returns false when nothing more can come: the source
// has failed or ended (mr.err), or the buffer is full of unread bytes.
func (mr *Reader) fill() bool {
	if mr.err != nil {
		return false
	}
	if mr.r > 0 {
		n := copy(mr.buf, mr.buf[mr.r:mr.w])
		mr.base += int64(mr.r)
		mr.r, mr.w = 0, n
	}
	if mr.w == len(mr.buf) {
		return false
	}
	for range 100 {
		n, err := mr.src.Read(mr.buf[mr.w:])
		if n < 0 || n > len(mr.buf)-mr.w {
			mr.err = errors.New("formdata: invalid Read count")
			return false
		}
		mr.w += n
		if err != nil {
			mr.err = err
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
	mr.err = io.ErrNoProgress
	return false
}

// readLine returns the next line, '\n' included, and consumes it. A last
// line without '\n' comes with the source's error (io.EOF at the end).
func (mr *Reader) readLine() ([]byte, error) {
	for scanned := 0; ; {
		if i := bytes.IndexByte(mr.buf[mr.r+scanned:mr.w], '\n'); i >= 0 {
			return mr.consume(scanned + i + 1)
		}
		scanned = mr.w - mr.r
		if int64(scanned) > mr.room() {
			return nil, ErrLimit
		}
		if !mr.fill() {
			if mr.err == nil {
				return nil, ErrHeaderTooLarge
			}
			line, err := mr.consume(mr.w - mr.r)
			if err != nil {
				return nil, err
			}
			return line, mr.err
		}
	}
}

// consume returns the next n unread bytes and marks them read; over the
// limit it fails with ErrLimit and consumes nothing.
func (mr *Reader) consume(n int) ([]byte, error) {
	if int64(n) > mr.room() {
		return nil, ErrLimit
	}
	b := mr.buf[mr.r : mr.r+n]
	mr.r += n
	return b, nil
}

// sourceErr is the source's error as a parse error: a body that ends is
// one that ended too early.
func (mr *Reader) sourceErr() error {
	if errors.Is(mr.err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return mr.err
}

// NextPart skips the rest of the current part and returns the next one; at
// the end of the body it returns io.EOF.
func (mr *Reader) NextPart() (*Part, error) {
	if mr.cur != nil {
		if err := mr.cur.discard(); err != nil {
			return nil, err
		}
		mr.cur = nil
	}
	if len(mr.dashBoundary) == 2 {
		return nil, fmt.Errorf("%w: empty boundary", ErrMalformed)
	}
	expectNewPart := false
	for {
		line, err := mr.readLine()
		if err != nil {
			switch {
			case errors.Is(err, io.EOF) && mr.isFinalBoundary(line):
				return nil, io.EOF
			case errors.Is(err, ErrLimit), errors.Is(err, ErrHeaderTooLarge):
				return nil, err
			}
			return nil, fmt.Errorf("%w: %w", ErrMalformed, mr.sourceErr())
		}
		if mr.isBoundaryDelimiterLine(line) {
			mr.partsRead++
			p, err := mr.newPart()
			if err != nil {
				return nil, err
			}
			mr.cur = p
			return p, nil
		}
		if mr.isFinalBoundary(line) {
			return nil, io.EOF
		}
		if expectNewPart {
			return nil, fmt.Errorf("%w: expecting a new part, got line %.40q", ErrMalformed, line)
		}
		if mr.partsRead == 0 {
			continue // preamble
		}
		if bytes.Equal(line, mr.nl) {
			// The line break between the previous part's data and the
			// boundary line that follows.
			expectNewPart = true
			continue
		}
		return nil, fmt.Errorf("%w: unexpected line %.40q", ErrMalformed, line)
	}
}

// isFinalBoundary reports whether line is `--boundary--[ \t]*(nl)?`.
func (mr *Reader) isFinalBoundary(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, mr.dashBoundaryDash)
	if !ok {
		return false
	}
	rest = skipLWSP(rest)
	return len(rest) == 0 || bytes.Equal(rest, mr.nl)
}

// isBoundaryDelimiterLine reports whether line is `--boundary[ \t]*nl`;
// on the first one it switches to "\n" line breaks when the line ends so.
func (mr *Reader) isBoundaryDelimiterLine(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, mr.dashBoundary)
	if !ok {
		return false
	}
	rest = skipLWSP(rest)
	if mr.partsRead == 0 && len(rest) == 1 && rest[0] == '\n' {
		mr.nl = mr.nl[1:]
		mr.nlDashBoundary = mr.nlDashBoundary[1:]
	}
	return bytes.Equal(rest, mr.nl)
}

func skipLWSP(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// newPart reads a part's header block, which must be whole in the buffer.
func (mr *Reader) newPart() (*Part, error) {
	var end int
	for {
		var complete bool
		end, complete = headerEnd(mr.buf[mr.r:mr.w])
		if complete {
			break
		}
		if int64(mr.w-mr.r) > mr.room() {
			return nil, ErrLimit
		}
		if !mr.fill() {
			if mr.err != nil {
				return nil, fmt.Errorf("%w: part header: %w", ErrMalformed, mr.sourceErr())
			}
			return nil, ErrHeaderTooLarge
		}
	}
	block, err := mr.consume(end)
	if err != nil {
		return nil, err
	}
	h, err := textproto.NewReader(bufio.NewReaderSize(bytes.NewReader(block), max(16, len(block)))).ReadMIMEHeader()
	if err != nil {
		return nil, fmt.Errorf("%w: part header: %w", ErrMalformed, err)
	}
	switch strings.ToLower(h.Get("Content-Transfer-Encoding")) {
	case "", "7bit", "8bit", "binary":
	default:
		return nil, fmt.Errorf("%w %q", ErrEncoding, h.Get("Content-Transfer-Encoding"))
	}
	return &Part{Header: h, mr: mr}, nil
}

// headerEnd returns the length of the header block at the start of b,
// through the empty line that ends it, and whether b holds all of it.
func headerEnd(b []byte) (int, bool) {
	if n := blankLine(b); n > 0 {
		return n, true
	}
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return 0, false
		}
		i += j + 1
		if n := blankLine(b[i:]); n > 0 {
			return i + n, true
		}
		if len(b) == i || len(b) == i+1 && b[i] == '\r' {
			return 0, false // the next line may be blank
		}
	}
}

// blankLine returns the length of the empty line ("\r\n" or "\n") at the
// start of b, or 0.
func blankLine(b []byte) int {
	switch {
	case len(b) >= 1 && b[0] == '\n':
		return 1
	case len(b) >= 2 && b[0] == '\r' && b[1] == '\n':
		return 2
	}
	return 0
}

// A Part is one part of the body: its header, and its data through Read.
type Part struct {
	Header textproto.MIMEHeader

	mr      *Reader
	n       int   // data bytes ready at mr.buf[mr.r:]
	total   int64 // data bytes returned so far
	err     error // to return once the n bytes are read
	readErr error // the source's error as seen by the scan

	disposition string
	params      map[string]string
}

// FormName returns the name parameter of a "form-data" Content-Disposition,
// or "".
func (p *Part) FormName() string {
	p.parseDisposition()
	if p.disposition != "form-data" {
		return ""
	}
	return p.params["name"]
}

// FileName returns the base name (filepath.Base) of the Content-Disposition's
// filename parameter, or "".
func (p *Part) FileName() string {
	p.parseDisposition()
	if name := p.params["filename"]; name != "" {
		return filepath.Base(name)
	}
	return ""
}

func (p *Part) parseDisposition() {
	if p.params != nil {
		return
	}
	d, params, err := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
	if err != nil {
		d, params = "", map[string]string{}
	}
	p.disposition, p.params = d, params
}

// Read reads the part's data; io.EOF at the boundary that ends it.
func (p *Part) Read(d []byte) (int, error) {
	mr := p.mr
	if err := p.scanMore(); err != nil {
		return 0, err
	}
	if p.n == 0 {
		return 0, p.err
	}
	n := min(len(d), p.n)
	if int64(n) > mr.room() {
		if n = int(max(mr.room(), 0)); n == 0 {
			return 0, ErrLimit
		}
	}
	copy(d, mr.buf[mr.r:mr.r+n])
	mr.r += n
	p.total += int64(n)
	p.n -= n
	if p.n == 0 {
		return n, p.err
	}
	return n, nil
}

// scanMore reads until the buffer holds data of the part (p.n > 0) or its
// end is known (p.err: io.EOF at the boundary, or the source's error).
func (p *Part) scanMore() error {
	mr := p.mr
	for p.n == 0 && p.err == nil {
		p.n, p.err = p.scan(mr.buf[mr.r:mr.w])
		if p.n == 0 && p.err == nil && !mr.fill() {
			if mr.err == nil {
				// Cannot happen: the buffer holds more than a boundary.
				return fmt.Errorf("%w: boundary scan stalled", ErrMalformed)
			}
			p.readErr = mr.sourceErr()
		}
	}
	return nil
}

// discard reads the rest of the part.
func (p *Part) discard() error {
	mr := p.mr
	for {
		if err := p.scanMore(); err != nil {
			return err
		}
		if p.n > 0 {
			if _, err := mr.consume(p.n); err != nil {
				return err
			}
			p.total += int64(p.n)
			p.n = 0
		}
		if p.err != nil {
			if errors.Is(p.err, io.EOF) {
				return nil
			}
			return p.err
		}
	}
}

// scan returns how many bytes at the start of buf are data of the part,
// and the error to return after them (io.EOF when the boundary follows
// them). It is mime/multipart's scanUntilBoundary, except that a possible
// boundary split at the end of buf is looked for only where it can start.
func (p *Part) scan(buf []byte) (int, error) {
	mr, readErr := p.mr, p.readErr
	if p.total == 0 {
		// A part with no data: its header's blank line was the line
		// break before the boundary.
		if bytes.HasPrefix(buf, mr.dashBoundary) {
			switch matchAfterPrefix(buf, mr.dashBoundary, readErr) {
			case -1:
				return len(mr.dashBoundary), nil
			case 0:
				return 0, nil
			case +1:
				return 0, io.EOF
			}
		}
		if bytes.HasPrefix(mr.dashBoundary, buf) {
			return 0, readErr
		}
	}
	nlDash := mr.nlDashBoundary
	if i := bytes.Index(buf, nlDash); i >= 0 {
		switch matchAfterPrefix(buf[i:], nlDash, readErr) {
		case -1:
			return i + len(nlDash), nil
		case 0:
			return i, nil
		case +1:
			return i, io.EOF
		}
	}
	if bytes.HasPrefix(nlDash, buf) {
		return 0, readErr
	}
	// Keep back a tail that may be the start of the boundary: only the
	// last len(nlDash)-1 bytes can hold one.
	tail := max(0, len(buf)-len(nlDash)+1)
	if i := bytes.LastIndexByte(buf[tail:], nlDash[0]); i >= 0 && bytes.HasPrefix(nlDash, buf[tail+i:]) {
		return tail + i, nil
	}
	return len(buf), readErr
}

// matchAfterPrefix reports whether buf, which starts with prefix (a
// boundary), is the boundary: +1 when "--", white space or the end of the
// input follows, -1 when something else does, 0 when more input is needed.
func matchAfterPrefix(buf, prefix []byte, readErr error) int {
	if len(buf) == len(prefix) {
		if readErr != nil {
			return +1
		}
		return 0
	}
	switch c := buf[len(prefix)]; c {
	case ' ', '\t', '\r', '\n':
		return +1
	case '-':
		if len(buf) == len(prefix)+1 {
			if readErr != nil {
				return -1
			}
			return 0
		}
		if buf[len(prefix)+1] == '-' {
			return +1
		}
	}
	return -1
}
