package formdata

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// newReaderSize returns a Reader with a new buffer of bufSize bytes and no
// 4 KiB floor, for tests that make lines and boundaries cross the end of
// the buffer. The buffer still holds a boundary and what follows it twice
// over, so the scan always progresses.
func newReaderSize(r io.Reader, boundary string, bufSize int) *Reader {
	return newReader(r, boundary, make([]byte, max(bufSize, 2*(len(boundary)+6)+4)))
}

// part is what a parse yields for one part.
type part struct {
	Header   textproto.MIMEHeader
	FormName string
	FileName string
	Data     string
}

// outcome is a whole parse: the parts, and how it ended (nil: io.EOF after
// the last part).
type outcome struct {
	Parts []part
	Err   error
}

func (o outcome) String() string {
	var b strings.Builder
	for _, p := range o.Parts {
		fmt.Fprintf(&b, "[%q %q %v %q] ", p.FormName, p.FileName, p.Header, p.Data)
	}
	fmt.Fprintf(&b, "err=%v", o.Err)
	return b.String()
}

// maxParts bounds a parse in the fuzz test.
const maxParts = 50

// parseStd parses body with mime/multipart (raw parts: no quoted-printable
// decoding, which this package refuses instead).
func parseStd(body []byte, boundary string) outcome {
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	var o outcome
	for range maxParts {
		p, err := mr.NextRawPart()
		if err == io.EOF { //nolint:errorlint // a wrapped io.EOF is an error here

			return o
		}
		if err != nil {
			o.Err = err
			return o
		}
		data, err := io.ReadAll(p)
		o.Parts = append(o.Parts, part{p.Header, p.FormName(), p.FileName(), string(data)})
		if err != nil {
			o.Err = err
			return o
		}
	}
	return o
}

// parse parses body with this package, reading the source through wrap and
// the parts with reads of readSize bytes.
func parse(body []byte, boundary string, bufSize, readSize int, wrap func(io.Reader) io.Reader) outcome {
	mr := newReaderSize(wrap(bytes.NewReader(body)), boundary, bufSize)
	var o outcome
	for range maxParts {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return o
		}
		if err != nil {
			o.Err = err
			return o
		}
		var data bytes.Buffer
		_, err = io.CopyBuffer(onlyWriter{&data}, onlyReader{p}, make([]byte, readSize))
		o.Parts = append(o.Parts, part{p.Header, p.FormName(), p.FileName(), data.String()})
		if err != nil {
			o.Err = err
			return o
		}
	}
	return o
}

type onlyReader struct{ io.Reader }
type onlyWriter struct{ io.Writer }

func identity(r io.Reader) io.Reader { return r }

// cases are bodies for boundary "b" (and "bb" where noted).
var cases = []struct{ name, body string }{
	{"one part", "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nhello\r\n--b--\r\n"},
	{"two parts", "--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nv\r\n--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"dir/a.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--b--"},
	{"preamble and epilogue", "preamble line\r\nmore\r\n--b\r\n\r\ndata\r\n--b--\r\nepilogue"},
	{"LF only", "--b\nContent-Disposition: form-data; name=\"f\"\n\ndata\n--b\n\nx\n--b--\n"},
	{"empty part", "--b\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\n--b--\r\n"},
	{"empty part then part", "--b\r\n\r\n--b\r\n\r\nx\r\n--b--\r\n"},
	{"boundary-like data", "--b\r\n\r\nx\r\n--bX\r\n--b-x\r\n--b\r\n\r\ny\r\n--b--"},
	{"boundary with white space", "--b \t\r\n\r\nx\r\n--b  \r\n\r\ny\r\n--b-- \r\n"},
	{"CR LF inside data", "--b\r\n\r\nline1\r\nline2\r\n\r\n-\r\n--\r\n--b--\r\n"},
	{"truncated data", "--b\r\n\r\nhello"},
	{"truncated boundary", "--b\r\n\r\nhello\r\n--"},
	{"truncated header", "--b\r\nContent-Type: text/plain\r\n"},
	{"no final boundary", "--b\r\n\r\nhello\r\n--b\r\n"},
	{"no boundary at all", "just text\r\n"},
	{"empty body", ""},
	{"garbage after part", "--b\r\n\r\nx\r\n--b\r\nnot a header line\r\n\r\ny\r\n--b--"},
	{"unexpected line", "--b\r\n\r\nx\r\n--b--\r\n"},
	{"header continuation", "--b\r\nContent-Disposition: form-data;\r\n name=\"f\"\r\n\r\nx\r\n--b--"},
	{"long data", "--b\r\n\r\n" + strings.Repeat("0123456789\r\n-", 3000) + "\r\n--b--\r\n"},
	{"RFC 2231 filename", "--b\r\nContent-Disposition: form-data; name=\"file\"; filename*=UTF-8''na%C3%AFve.txt\r\n\r\nx\r\n--b--"},
}

func TestReader_MatchesStdlib(t *testing.T) {
	wraps := map[string]func(io.Reader) io.Reader{
		"whole":    identity,
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"data+EOF": iotest.DataErrReader,
	}
	for _, c := range cases {
		want := parseStd([]byte(c.body), "b")
		for wname, wrap := range wraps {
			for _, bufSize := range []int{0, 16, 37, 4096} {
				for _, readSize := range []int{1, 3, 512} {
					got := parse([]byte(c.body), "b", bufSize, readSize, wrap)
					if bufSize < 4096 && agrees(got, want, c.body, "b") || same(got, want) || cutHeader(got, want, c.body, "b") {
						continue
					}
					t.Errorf("%s (%s, buffer %d, reads of %d):\n got %v\nwant %v", c.name, wname, bufSize, readSize, got, want)
				}
			}
		}
	}
}

// same reports whether two outcomes agree: the same parts, and both ended
// cleanly or both failed.
func same(got, want outcome) bool {
	return equalParts(got.Parts, want.Parts) && (got.Err == nil) == (want.Err == nil)
}

// cutHeader reports whether got is this package's error for a body that
// ends inside a part's header, where mime/multipart reports a clean end
// (textproto's io.EOF passes through its NextPart).
func cutHeader(got, want outcome, body, boundary string) bool {
	ended := strings.HasSuffix(strings.TrimRight(body, " \t\r\n"), "--"+boundary+"--")
	return want.Err == nil && !ended && errors.Is(got.Err, io.ErrUnexpectedEOF) && equalParts(got.Parts, want.Parts)
}

func equalParts(a, b []part) bool {
	return len(a) == 0 && len(b) == 0 || reflect.DeepEqual(a, b)
}

// agrees reports whether got is want, or the start of want up to one of
// the refusals this package makes on purpose (a header block larger than
// its buffer, a Content-Transfer-Encoding).
func agrees(got, want outcome, body, boundary string) bool {
	if cutHeader(got, want, body, boundary) {
		return true
	}
	if errors.Is(got.Err, ErrHeaderTooLarge) || errors.Is(got.Err, ErrEncoding) {
		n := len(got.Parts)
		return n <= len(want.Parts) && equalParts(got.Parts, want.Parts[:n])
	}
	return same(got, want)
}

// FuzzReader holds the package to mime/multipart on any input: the same
// parts with the same data and the same success or failure, except where
// this package refuses on purpose (a header block larger than its buffer,
// a Content-Transfer-Encoding).
func FuzzReader(f *testing.F) {
	for _, c := range cases {
		f.Add([]byte(c.body), "b", uint16(64), uint8(7))
	}
	f.Add([]byte("--a b\r\n\r\nx\r\n--a b--"), "a b", uint16(0), uint8(0))
	f.Fuzz(func(t *testing.T, body []byte, boundary string, bufSize uint16, chunk uint8) {
		if boundary == "" || len(boundary) > 70 || strings.ContainsAny(boundary, "\r\n") {
			return
		}
		want := parseStd(body, boundary)
		wrap := identity
		if chunk > 0 {
			wrap = func(r io.Reader) io.Reader { return &chunkReader{r: r, n: int(chunk)} }
		}
		got := parse(body, boundary, int(bufSize), int(chunk)+1, wrap)
		if !agrees(got, want, string(body), boundary) {
			t.Fatalf("\n got %v\nwant %v", got, want)
		}
	})
}

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	r io.Reader
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	return c.r.Read(p[:min(len(p), c.n)])
}

func TestReader_LargeReads(t *testing.T) {
	data := bytes.Repeat([]byte("lorem ipsum dolor sit amet\n"), 40_000) // ~1 MB
	body := "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\n" + string(data) + "\r\n--b--\r\n"
	mr := NewReader(strings.NewReader(body), "b", nil)
	p, err := mr.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2<<20)
	reads, total := 0, 0
	for {
		n, err := p.Read(buf[total:])
		total += n
		reads++
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(buf[:total], data) {
		t.Fatalf("data differs: %d bytes, want %d", total, len(data))
	}
	// 1 MB through a 256 KiB buffer: a handful of reads, not 4 KiB ones.
	if want := len(data)/DefaultBufferSize + 2; reads > want {
		t.Errorf("%d reads, want at most %d", reads, want)
	}
}

func TestReader_Limit(t *testing.T) {
	field := "--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n" + strings.Repeat("v", 1000) + "\r\n"
	file := "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\n" + strings.Repeat("f", 5000) + "\r\n--b--\r\n"
	for _, tc := range []struct {
		name   string
		body   string
		limit  int64
		wantOK bool
	}{
		{"fields within the limit", field + field + file, 4000, true},
		{"fields over the limit", strings.Repeat(field, 10) + file, 4000, false},
		{"preamble over the limit", strings.Repeat("preamble\r\n", 1000) + file, 4000, false},
		{"header over the limit", "--b\r\n" + strings.Repeat("X-A: b\r\n", 1000) + "\r\nx\r\n--b--", 4000, false},
	} {
		mr := NewReader(strings.NewReader(tc.body), "b", nil)
		mr.SetLimit(tc.limit)
		var err error
		for {
			var p *Part
			if p, err = mr.NextPart(); err != nil {
				break
			}
			if p.FormName() == "file" {
				break
			}
		}
		if tc.wantOK && err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if !tc.wantOK && !errors.Is(err, ErrLimit) {
			t.Errorf("%s: error %v, want ErrLimit", tc.name, err)
		}
	}
}

func TestReader_Refusals(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       error
	}{
		{"header larger than the buffer", "--b\r\nX-A: " + strings.Repeat("a", 8000) + "\r\n\r\nx\r\n--b--", ErrHeaderTooLarge},
		{"line larger than the buffer", strings.Repeat("a", 8000) + "\r\n--b\r\n\r\nx\r\n--b--", ErrHeaderTooLarge},
		{"quoted-printable", "--b\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nx=3D\r\n--b--", ErrEncoding},
		{"base64", "--b\r\nContent-Transfer-Encoding: BASE64\r\n\r\neA==\r\n--b--", ErrEncoding},
		{"truncated", "--b\r\n\r\nhello", io.ErrUnexpectedEOF},
		{"not multipart", "hello", ErrMalformed},
	} {
		mr := NewReader(strings.NewReader(tc.body), "b", make([]byte, 4096))
		p, err := mr.NextPart()
		if err == nil {
			_, err = io.ReadAll(p)
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestReader_SmallBuffer: a buffer too small for the 4 KiB floor or for
// the boundary is replaced, so a long boundary still parses.
func TestReader_SmallBuffer(t *testing.T) {
	boundary := strings.Repeat("b", 3000)
	body := "--" + boundary + "\r\n\r\nhello\r\n--" + boundary + "--\r\n"
	p, err := NewReader(strings.NewReader(body), boundary, make([]byte, 16)).NextPart()
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(p); err != nil || string(b) != "hello" {
		t.Fatalf("read %q, %v", b, err)
	}
}

func TestReader_EmptyBoundary(t *testing.T) {
	if _, err := NewReader(strings.NewReader("--\r\n"), "", nil).NextPart(); !errors.Is(err, ErrMalformed) {
		t.Errorf("error %v, want ErrMalformed", err)
	}
}

// BenchmarkRead compares reading a 10 MB file part with this package and
// with mime/multipart.
func BenchmarkRead(b *testing.B) {
	data := bytes.Repeat([]byte("lorem ipsum dolor sit amet\n"), (10<<20)/27)
	body := []byte("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\n" + string(data) + "\r\n--b--\r\n")
	buf := make([]byte, 256<<10)
	b.Run("formdata", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			p, err := NewReader(bytes.NewReader(body), "b", nil).NextPart()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.CopyBuffer(io.Discard, onlyReader{p}, buf); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mime-multipart-bufio256k", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			p, err := multipart.NewReader(bufio.NewReaderSize(bytes.NewReader(body), 256<<10), "b").NextPart()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.CopyBuffer(io.Discard, onlyReader{p}, buf); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mime-multipart", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			p, err := multipart.NewReader(bytes.NewReader(body), "b").NextPart()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.CopyBuffer(io.Discard, onlyReader{p}, buf); err != nil {
				b.Fatal(err)
			}
		}
	})
}
