package httpapi

import (
	"bytes"
	"io/fs"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// FuzzMultipartUpload is the upload route's fuzz target: any body
// under any multipart content type, posted to the upload route by a
// tenant, never yields a 5xx or an answer openapi.json does not declare,
// and never leaves a blob outside the tenant's prefix (nor a temporary
// file once the request is answered). Its seeds
// are in testdata/fuzz/FuzzMultipartUpload.
func FuzzMultipartUpload(f *testing.F) {
	body, ct := multipartFile(f, "report.md", []byte("# Title\n\ntext"))
	_, params, _ := mime.ParseMediaType(ct)
	f.Add(body, params["boundary"])
	e := newTenantEnv(f, func(c *Config) { c.MaxUploadBytes = 64 << 10 })
	a := e.newTenant(f, "acme", 1_000_000) // docket.MaxTenantRateLimit
	h := e.srv.Handler()
	keyRE := regexp.MustCompile(`^acme/[0-9a-f-]{36}$`)
	f.Fuzz(func(t *testing.T, body []byte, boundary string) {
		ct := "multipart/form-data"
		if boundary != "" {
			ct = mime.FormatMediaType(ct, map[string]string{"boundary": boundary})
			if ct == "" {
				return // not a header value a client could send
			}
		}
		req := httptest.NewRequest(http.MethodPost, "/v1/documents", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+a.key)
		req.Header.Set("Content-Type", ct)
		rec := httptest.NewRecorder()
		ValidateResponses(t, h).ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("status %d for a %d-byte body, boundary %q: %s", rec.Code, len(body), boundary, rec.Body.Bytes())
		}
		checkBlobKeys(t, e.blobs.Root(), keyRE)
	})
}

// checkBlobKeys fails unless every file under root is a blob whose key
// matches keyRE.
func checkBlobKeys(t *testing.T, root string, keyRE *regexp.Regexp) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if key := filepath.ToSlash(rel); !keyRE.MatchString(key) {
			t.Errorf("blob or file %q outside the tenant's keys", key)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// TestFuzzMultipartUploadSeeds checks that the seed corpus is there: the
// fuzz target runs it in every plain `go test`.
func TestFuzzMultipartUploadSeeds(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"FuzzMultipartUpload", "FuzzSanitizeFilename"} {
		files, err := filepath.Glob(filepath.Join("testdata", "fuzz", target, "*"))
		if err != nil || len(files) < 5 {
			t.Errorf("%s: %d seed files (%v), want at least 5", target, len(files), err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil || !strings.HasPrefix(string(b), "go test fuzz v1\n") {
				t.Errorf("%s: not a corpus file (%v)", f, err)
			}
		}
	}
}
