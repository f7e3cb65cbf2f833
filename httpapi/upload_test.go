package httpapi

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/docketq/docket"
)

func TestUpload_Accepted(t *testing.T) {
	t.Parallel()
	e := newTenantEnv(t, nil)
	a := e.newTenant(t, "acme", 0)
	data := []byte("# Quarterly report\n\nRevenue grew.\n")
	r := e.upload(t, a.key, "report.md", data).want(t, http.StatusAccepted)
	var u uploaded
	r.decode(t, &u)
	if got, want := r.header.Get("Location"), "/v1/jobs/"+u.Job.ID; got != want {
		t.Errorf("Location %q, want %q", got, want)
	}
	sum := sha256.Sum256(data)
	d := u.Document
	if d.TenantID != a.id || d.Filename != "report.md" || d.ContentType != "text/markdown; charset=utf-8" ||
		d.Size != int64(len(data)) || d.SHA256 != hex.EncodeToString(sum[:]) || d.Status != "pending" || d.JobID != u.Job.ID {
		t.Errorf("document %+v", d)
	}
	j := u.Job
	if j.DocumentID != d.ID || j.TenantID != a.id || j.Kind != documentKind || j.Status != "pending" ||
		j.Stage != "queued" || j.QueuePosition == nil || *j.QueuePosition != 0 || j.Attempt != 0 || j.MaxAttempts != 3 {
		t.Errorf("job %+v", j)
	}
	// The raw JSON has every member of a job, null or not.
	for _, m := range []string{`"queue_position":0`, `"error_message":null`, `"retry_of":null`, `"started_at":null`, `"completed_at":null`} {
		if !bytes.Contains(r.body, []byte(m)) {
			t.Errorf("body lacks %s: %s", m, r.body)
		}
	}
	var doc *docket.Document
	err := e.driver.ReadTenant(context.Background(), a.id, func(tx docket.Tx) error {
		var err error
		doc, err = tx.DocumentGet(context.Background(), d.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	rc, _, err := e.blobs.Open(context.Background(), doc.BlobKey)
	if err != nil {
		t.Fatalf("blob: %v", err)
	}
	got, _ := io.ReadAll(rc)
	_ = rc.Close()
	if !bytes.Equal(got, data) {
		t.Errorf("blob holds %q", got)
	}
	e.do(t, http.MethodGet, "/v1/documents/"+d.ID, a.key, nil).want(t, http.StatusOK)
}

// TestUpload_BadInput: the upload route's status for each kind of bad or
// borderline file (empty, disguised, at and past the size limit), and no
// blob left behind by a refusal.
func TestUpload_BadInput(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(c *Config) { c.MaxUploadBytes = 1 << 20 }, func(t *testing.T, e *tenantEnv) {
		a := e.newTenant(t, "acme", 1000)
		zipNoDoc := zipWith(t, map[string]string{"[Content_Types].xml": "<Types/>", "word/other.xml": "<x/>"})
		cases := []struct {
			name, filename string
			data           []byte
			want           int
		}{
			{"empty", "a.txt", nil, http.StatusBadRequest},
			{"png as pdf", "a.pdf", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), http.StatusUnsupportedMediaType},
			{"zip as pdf", "a.pdf", zipNoDoc, http.StatusUnsupportedMediaType},
			{"zip without document.xml", "a.docx", zipNoDoc, http.StatusUnsupportedMediaType},
			{"exe named pdf.exe", "report.pdf.exe", []byte("MZ\x90\x00\x03\x00\x00\x00"), http.StatusUnsupportedMediaType},
			{"svg with PDF inside", "a.pdf", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><!-- %PDF-1.7 --></svg>`), http.StatusUnsupportedMediaType},
			{"pdf magic not at 0", "a.pdf", []byte("\x00\x01%PDF-1.7\n"), http.StatusUnsupportedMediaType},
			{"html named pdf", "a.pdf", []byte("<!doctype html><p>%PDF-1.4</p>"), http.StatusAccepted},
			{"limit", "big.txt", bytes.Repeat([]byte("a"), 1<<20), http.StatusAccepted},
			{"limit + 1", "big.txt", bytes.Repeat([]byte("a"), 1<<20+1), http.StatusRequestEntityTooLarge},
		}
		for _, c := range cases {
			before := e.blobCount(t)
			r := e.upload(t, a.key, c.filename, c.data)
			if r.status != c.want {
				t.Errorf("%s: status %d, want %d: %s", c.name, r.status, c.want, r.body)
			}
			if grew := e.blobCount(t) - before; c.want != http.StatusAccepted && grew != 0 {
				t.Errorf("%s: %d blobs left behind", c.name, grew)
			}
		}
		// An HTML body labelled application/pdf is stored as what it is.
		r := e.upload(t, a.key, "x.pdf", []byte("<html><body>hi</body></html>")).want(t, http.StatusAccepted)
		var u uploaded
		r.decode(t, &u)
		if !strings.HasPrefix(u.Document.ContentType, "text/html") {
			t.Errorf("content type %q", u.Document.ContentType)
		}
	})
}

func TestUpload_BlobKeyAndFilename(t *testing.T) {
	t.Parallel()
	forEachStore(t, nil, func(t *testing.T, e *tenantEnv) {
		a := e.newTenant(t, "acme", 1000)
		keyRE := regexp.MustCompile(`^acme/[0-9a-f-]{36}$`)
		names := []string{
			"../../../app/config.yaml", `..\..\x`, "/abs", `C:\x`, "%2e%2e%2f", "a.pdf\x00.exe",
			"evil\u202etxt.pdf", strings.Repeat("n", 1000), "", ".", "..", "CON", "trailing. ", "ok name-1.txt",
		}
		for _, name := range names {
			before := e.blobCount(t)
			r := e.upload(t, a.key, name, []byte("hello"))
			if r.status == http.StatusBadRequest && strings.ContainsRune(name, 0) {
				// A NUL in a header is malformed multipart: refused, nothing stored.
				if e.blobCount(t) != before {
					t.Errorf("%q: refused but a blob was left", name)
				}
				continue
			}
			if r.status != http.StatusAccepted {
				t.Errorf("%q: status %d: %s", name, r.status, r.body)
				continue
			}
			var u uploaded
			r.decode(t, &u)
			checkDisplayName(t, name, u.Document.Filename)
			var doc *docket.Document
			_ = e.driver.ReadTenant(context.Background(), a.id, func(tx docket.Tx) error {
				var err error
				doc, err = tx.DocumentGet(context.Background(), u.Document.ID)
				return err
			})
			if doc == nil || !keyRE.MatchString(doc.BlobKey) || doc.BlobKey != "acme/"+doc.ID {
				t.Errorf("%q: blob key %v", name, doc)
			}
		}
	})
}

// zipWith returns a ZIP archive of files.
func zipWith(tb testing.TB, files map[string]string) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			tb.Fatal(err)
		}
		_, _ = io.WriteString(w, body)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func TestUpload_DOCX(t *testing.T) {
	t.Parallel()
	e := newTenantEnv(t, nil)
	a := e.newTenant(t, "acme", 0)
	docx := zipWith(t, map[string]string{
		"[Content_Types].xml": "<Types/>",
		"word/document.xml":   `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>Hi</w:t></w:r></w:p></w:body></w:document>`,
	})
	var u uploaded
	e.upload(t, a.key, "letter.docx", docx).want(t, http.StatusAccepted).decode(t, &u)
	if !strings.Contains(u.Document.ContentType, "wordprocessingml") {
		t.Errorf("content type %q", u.Document.ContentType)
	}
}
