package httpapi

import (
	"crypto/sha256"
	"errors"
	"hash"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// Errors of reading an upload; bodyError maps them to problems.
var (
	errUploadTooLarge = errors.New("upload too large")
	errUploadSlow     = errors.New("upload below the minimum transfer rate")
)

// bodyReader reads a request body with a cap and a transfer-rate floor:
// before each read it sets the connection's read deadline to the time by
// which the bytes read so far would fall below minRate (after a grace
// period), so a client that trickles its body is cut off. Reading past
// limit fails with errUploadTooLarge.
type bodyReader struct {
	r     io.Reader
	rc    *http.ResponseController
	start time.Time
	grace time.Duration
	rate  int64 // bytes per second

	n     int64 // bytes read
	limit int64
	err   error // the first error returned, io.EOF excluded
}

func newBodyReader(w http.ResponseWriter, r *http.Request, limit int64) *bodyReader {
	return &bodyReader{
		r: r.Body, rc: http.NewResponseController(w), start: time.Now(),
		grace: uploadGrace, rate: uploadMinRate, limit: limit,
	}
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if room := b.limit - b.n + 1; int64(len(p)) > room {
		p = p[:room]
	}
	deadline := b.start.Add(b.grace + time.Duration(float64(b.n)/float64(b.rate)*float64(time.Second)))
	if time.Now().After(deadline) {
		b.err = errUploadSlow
		return 0, b.err
	}
	_ = b.rc.SetReadDeadline(deadline) // unsupported: no floor, the server's timeouts remain
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.limit {
		n -= int(b.n - b.limit)
		b.n = b.limit
		b.err = errUploadTooLarge
		return n, b.err
	}
	if err != nil && !errors.Is(err, io.EOF) {
		if isTimeout(err) {
			err = errUploadSlow
		}
		b.err = err
	}
	return n, err
}

// done clears the read deadline, so that the connection can serve its next
// request; after a client too slow, it rather makes the server close the
// connection without reading the rest of the body (which Go's server would
// otherwise try before it answers).
func (b *bodyReader) done(w http.ResponseWriter) {
	if errors.Is(b.err, errUploadSlow) {
		w.Header().Set("Connection", "close")
		_ = b.rc.SetReadDeadline(time.Now())
		return
	}
	_ = b.rc.SetReadDeadline(time.Time{})
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// fileReader reads the file part: it counts and hashes what passes and
// fails with errUploadTooLarge past max bytes.
type fileReader struct {
	r   io.Reader
	max int64
	n   int64
	sha hash.Hash
	err error // the first error returned, io.EOF excluded
}

func newFileReader(r io.Reader, max int64) *fileReader {
	return &fileReader{r: r, max: max, sha: sha256.New()}
}

func (f *fileReader) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	if room := f.max - f.n + 1; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := f.r.Read(p)
	f.n += int64(n)
	if f.n > f.max {
		f.err = errUploadTooLarge
		return 0, f.err
	}
	f.sha.Write(p[:n])
	if err != nil && !errors.Is(err, io.EOF) {
		f.err = err
	}
	return n, err
}

// bodyError maps an error of reading the upload to its problem; ok is false
// when err did not come from reading it.
func (s *Server) bodyError(err error) (herr error, ok bool) {
	switch {
	case err == nil:
		return nil, false
	case errors.Is(err, errUploadTooLarge):
		return errorf(http.StatusRequestEntityTooLarge, "the file is over the %d-byte limit", s.cfg.MaxUploadBytes), true
	case errors.Is(err, errPartsLimit):
		return errorf(http.StatusBadRequest, "multipart headers or fields before the file are over %d bytes", uploadOverhead), true
	case errors.Is(err, errUploadSlow):
		return &httpError{status: http.StatusRequestTimeout, title: "Request Timeout",
			detail: "the upload was slower than the minimum transfer rate"}, true
	}
	return errorf(http.StatusBadRequest, "reading the upload: %v", err), true
}
