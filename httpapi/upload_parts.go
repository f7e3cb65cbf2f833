package httpapi

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"strings"
	"sync"
)

// uploadBufferSize is the read buffer an upload in progress holds,
// whatever the file's size: the body is read from the connection in
// chunks this large.
const uploadBufferSize = 256 << 10

// uploadBufs holds the uploads' read buffers.
var uploadBufs = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, uploadBufferSize) }}

// errPartsLimit: the multipart headers and fields around the file passed
// the limit set with partReader.SetLimit.
var errPartsLimit = errors.New("multipart: over the limit around the file")

// errEncoding: a part with a Content-Transfer-Encoding other than 7bit,
// 8bit or binary (RFC 7578 deprecates the others for form data; what
// mime/multipart would decode, quoted-printable, is refused).
var errEncoding = errors.New("multipart: unsupported Content-Transfer-Encoding")

// partReader reads the parts of an upload's body: mime/multipart over a
// pooled bufio.Reader of uploadBufferSize bytes (an own parser was not
// 20 % faster end to end: docs/benchmarks.md). It keeps a limit on what
// the parts around the file consume by counting what the body gave.
type partReader struct {
	src   limitReader
	br    *bufio.Reader
	mr    *multipart.Reader
	limit int64 // < 0: none
}

// newPartReader returns the reader of body's parts; release returns its
// buffer.
func newPartReader(body io.Reader, boundary string) *partReader {
	m := &partReader{limit: -1, src: limitReader{r: body, max: -1}}
	m.br = uploadBufs.Get().(*bufio.Reader)
	m.br.Reset(&m.src)
	m.mr = multipart.NewReader(m.br, boundary)
	return m
}

// release returns the buffer to the pool; m is not used after.
func (m *partReader) release() {
	m.br.Reset(nil)
	uploadBufs.Put(m.br)
}

// Offset is how many bytes of the body mime/multipart took (it may hold
// up to 4 KiB of them unparsed, so a limit trips that much early at most).
func (m *partReader) Offset() int64 { return m.src.n - int64(m.br.Buffered()) }

// SetLimit makes parsing fail with errPartsLimit once Offset passes n;
// n < 0: no limit.
func (m *partReader) SetLimit(n int64) {
	m.limit, m.src.max = n, -1
	if n >= 0 {
		m.src.max = n + uploadBufferSize // what the buffer holds is not consumed yet
	}
}

// NextPart returns the next part (io.EOF after the last) with its data as
// sent: a Content-Transfer-Encoding other than 7bit, 8bit or binary is
// errEncoding.
func (m *partReader) NextPart() (*multipart.Part, error) {
	p, err := m.mr.NextRawPart()
	switch {
	case errors.Is(err, errPartsLimit), errors.Is(err, multipart.ErrMessageTooLarge):
		return nil, fmt.Errorf("%w: %w", errPartsLimit, err)
	case err != nil:
		return nil, err
	case m.limit >= 0 && m.Offset() > m.limit:
		return nil, errPartsLimit
	}
	switch strings.ToLower(p.Header.Get("Content-Transfer-Encoding")) {
	case "", "7bit", "8bit", "binary":
		return p, nil
	}
	return nil, errEncoding
}

// limitReader counts what it reads and fails with errPartsLimit once past
// max (< 0: no limit), and on every read after.
type limitReader struct {
	r   io.Reader
	n   int64
	max int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.max >= 0 && l.n > l.max {
		return 0, errPartsLimit
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	return n, err
}
