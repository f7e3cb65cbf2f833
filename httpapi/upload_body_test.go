package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// hideLen hides a reader's length, so the client sends it chunked.
type hideLen struct{ io.Reader }

// TestUpload_TooLarge: limit + 1 bytes are refused with 413 whether the
// body has a Content-Length or is chunked, and nothing is left in the blob
// directory (no object, no temporary file).
func TestUpload_TooLarge(t *testing.T) {
	t.Parallel()
	const limit = 256 << 10
	e := newTenantEnv(t, func(c *Config) { c.MaxUploadBytes = limit })
	a := e.newTenant(t, "acme", 1000)
	for _, size := range []int{limit, limit + 1} {
		body, ct := multipartFile(t, "big.txt", bytes.Repeat([]byte("z"), size))
		want := http.StatusAccepted
		if size > limit {
			want = http.StatusRequestEntityTooLarge
		}
		e.do(t, http.MethodPost, "/v1/documents", a.key, bytes.NewReader(body), "Content-Type", ct).want(t, want)
		e.do(t, http.MethodPost, "/v1/documents", a.key, hideLen{bytes.NewReader(body)}, "Content-Type", ct).want(t, want)
	}
	// A Content-Length over the limit is refused before the body is read.
	body, ct := multipartFile(t, "big.txt", bytes.Repeat([]byte("z"), 2*limit))
	e.do(t, http.MethodPost, "/v1/documents", a.key, bytes.NewReader(body), "Content-Type", ct).want(t, http.StatusRequestEntityTooLarge)
	if n := e.blobCount(t); n != 2 {
		t.Errorf("%d files in the blob directory, want the 2 accepted uploads", n)
	}
}

// TestUpload_MultipartBombs: many parts, many part headers and a huge
// header line are refused with 400 after a bounded read.
func TestUpload_MultipartBombs(t *testing.T) {
	t.Parallel()
	e := newTenantEnv(t, nil)
	a := e.newTenant(t, "acme", 1000)
	var parts bytes.Buffer
	mw := multipart.NewWriter(&parts)
	for i := range 10000 {
		_ = mw.WriteField(fmt.Sprint("f", i), "v")
	}
	fw, _ := mw.CreateFormFile("file", "a.txt")
	_, _ = fw.Write([]byte("hello"))
	_ = mw.Close()
	headers := "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n" +
		strings.Repeat("X-A: b\r\n", 20000) + "\r\nhello\r\n--b--\r\n"
	line := "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + strings.Repeat("a", 10<<20) + "\"\r\n\r\nhello\r\n--b--\r\n"
	cases := []struct {
		name, ct string
		body     []byte
	}{
		{"10,000 parts", mw.FormDataContentType(), parts.Bytes()},
		{"20,000 header fields", "multipart/form-data; boundary=b", []byte(headers)},
		{"10 MB header line", "multipart/form-data; boundary=b", []byte(line)},
		{"no file field", "multipart/form-data; boundary=b", []byte("--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nv\r\n--b--\r\n")},
		{"71-character boundary", "multipart/form-data; boundary=" + strings.Repeat("b", 71), []byte("--" + strings.Repeat("b", 71) + "\r\n\r\nx\r\n--" + strings.Repeat("b", 71) + "--\r\n")},
		{"quoted-printable file", "multipart/form-data; boundary=b", []byte("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nhello=3D\r\n--b--\r\n")},
		{"truncated", "multipart/form-data; boundary=b", []byte("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\nhello")},
	}
	for _, c := range cases {
		start := time.Now()
		r := e.postRaw(t, a.key, c.ct, c.body)
		if r != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", c.name, r)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", c.name, d)
		}
	}
	if n := e.blobCount(t); n != 0 {
		t.Errorf("%d files in the blob directory", n)
	}
}

// postRaw sends body on its own connection and returns the status; the
// server may answer before the body is sent and close the connection.
func (e *tenantEnv) postRaw(tb testing.TB, key, ct string, body []byte) int {
	tb.Helper()
	u, _ := url.Parse(e.url)
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	head := fmt.Sprintf("POST /v1/documents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
		key, ct, len(body))
	go func() { _, _ = c.Write(append([]byte(head), body...)) }() // may fail once the server has answered
	res, err := http.ReadResponse(bufioReader(c), nil)
	if err != nil {
		tb.Fatalf("read response: %v", err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}

// TestUpload_Slowloris: a client that trickles its body below the minimum
// rate is cut off with 408 soon after the grace period. Not parallel: it
// shrinks the package's rate floor.
func TestUpload_Slowloris(t *testing.T) {
	grace, rate := uploadGrace, uploadMinRate
	uploadGrace, uploadMinRate = time.Second, 1024
	t.Cleanup(func() { uploadGrace, uploadMinRate = grace, rate })
	e := newTenantEnv(t, nil)
	a := e.newTenant(t, "acme", 0)
	u, _ := url.Parse(e.url)
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	start := time.Now()
	fmt.Fprintf(c, "POST /v1/documents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n"+
		"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\n", a.key)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // one byte every 100 ms: 10 B/s
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if _, err := c.Write([]byte("a")); err != nil {
					return
				}
			}
		}
	}()
	br := bufioReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	if res.StatusCode != http.StatusRequestTimeout {
		t.Errorf("status %d, want 408", res.StatusCode)
	}
	if _, err := br.ReadByte(); err == nil || isTimeout(err) {
		t.Errorf("connection still open after the 408: %v", err)
	}
	if d := time.Since(start); d > uploadGrace+time.Second {
		t.Errorf("cut off after %v, want within grace + 1 s", d)
	}
	if n := e.blobCount(t); n != 0 {
		t.Errorf("%d files in the blob directory", n)
	}
}

// TestUpload_Fields: one file per request, in the field "file"; a second
// file is refused, not ignored, and a file in another field is named in
// the refusal whatever its size (past 64 KB it used to be called headers
// "before the file").
func TestUpload_Fields(t *testing.T) {
	t.Parallel()
	e := newTenantEnv(t, nil)
	a := e.newTenant(t, "acme", 1000)
	big := bytes.Repeat([]byte("a"), 100<<10)
	type part struct{ field, filename, data string }
	cases := []struct {
		name   string
		parts  []part
		want   int
		detail string
	}{
		{"two files", []part{{"file", "a.txt", "one"}, {"file", "b.txt", "two"}}, 400,
			`one file per request: this request sent a second file (field "file"); upload it with another request`},
		{"second file in another field", []part{{"file", "a.txt", "one"}, {"attachment", "b.txt", "two"}}, 400,
			`one file per request: this request sent a second file (field "attachment"); upload it with another request`},
		{"file in another field before file", []part{{"upload", "a.txt", "one"}, {"file", "b.txt", "two"}}, 400,
			`one file per request: this request sent a second file (field "upload"); upload it with another request`},
		{"wrong field, small", []part{{"upload", "a.txt", "one"}}, 400,
			`send the file in the multipart field "file"; this request sent one in the field "upload"`},
		{"wrong field, over 64 KB", []part{{"upload", "a.txt", string(big)}}, 400,
			`send the file in the multipart field "file"; this request sent one in the field "upload"`},
		{"a field after the file", []part{{"file", "a.txt", "one"}, {"note", "", "hello"}}, 202, ""},
	}
	for _, c := range cases {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		for _, p := range c.parts {
			var w io.Writer
			var err error
			if p.filename != "" {
				w, err = mw.CreateFormFile(p.field, p.filename)
			} else {
				w, err = mw.CreateFormField(p.field)
			}
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.WriteString(w, p.data)
		}
		_ = mw.Close()
		r := e.do(t, http.MethodPost, "/v1/documents", a.key, &body, "Content-Type", mw.FormDataContentType())
		if r.status != c.want {
			t.Errorf("%s: status %d, want %d: %s", c.name, r.status, c.want, r.body)
			continue
		}
		if c.detail != "" {
			var p struct {
				Detail string `json:"detail"`
			}
			r.decode(t, &p)
			if p.Detail != c.detail {
				t.Errorf("%s: detail %q, want %q", c.name, p.Detail, c.detail)
			}
		}
	}
	if n := e.blobCount(t); n != 1 {
		t.Errorf("%d files in the blob directory, want the one accepted upload", n)
	}
}
