package blob_test

import (
	"strings"
	"testing"

	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/blob/blobtest"
)

func TestOpen_Local(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, url := range []string{dir, dir + "/sub", "file://" + dir, "file://localhost" + dir + "/x", "file:" + dir} {
		s, err := blob.Open(t.Context(), url)
		if err != nil {
			t.Fatalf("Open(%q): %v", url, err)
		}
		if _, ok := s.(*blob.Local); !ok {
			t.Fatalf("Open(%q) = %T, want *blob.Local", url, s)
		}
	}
}

func TestOpen_S3(t *testing.T) {
	t.Parallel()
	// NewS3 makes no request, so no server is needed to check the URL is understood.
	for _, url := range []string{
		"s3://bucket",
		"s3://bucket/",
		"s3://bucket/docs/v1?endpoint=http://127.0.0.1:7070&region=us-east-1&path_style=true",
		"s3://my.bucket?endpoint=https://s3.example.com&path_style=false",
	} {
		s, err := blob.Open(t.Context(), url)
		if err != nil {
			t.Fatalf("Open(%q): %v", url, err)
		}
		if _, ok := s.(*blob.Bucket); !ok {
			t.Fatalf("Open(%q) = %T, want *blob.Bucket", url, s)
		}
	}
}

func TestOpen_Azure(t *testing.T) {
	// The store makes no request until used, so no server is needed either.
	t.Setenv("AZURE_STORAGE_ACCOUNT", "docket")
	t.Setenv("AZURE_STORAGE_KEY", blobtest.AzuriteKey)
	for _, url := range []string{
		"azblob://container",
		"azblob://container/docs/v1",
		"azblob://container?localemu=true&protocol=http&domain=127.0.0.1:10000",
	} {
		s, err := blob.Open(t.Context(), url)
		if err != nil {
			t.Fatalf("Open(%q): %v", url, err)
		}
		if _, ok := s.(*blob.Bucket); !ok {
			t.Fatalf("Open(%q) = %T, want *blob.Bucket", url, s)
		}
	}
}

func TestOpen_BadURL(t *testing.T) {
	t.Setenv("AZURE_STORAGE_ACCOUNT", "docket")
	t.Setenv("AZURE_STORAGE_KEY", blobtest.AzuriteKey)
	tests := []struct{ url, wantErr string }{
		{"", "empty"},
		{"gs://bucket", `unsupported scheme "gs"`},
		{"http://host/x", `unsupported scheme "http"`},
		{"file://host/x", `host "host" not supported`},
		{"file://", "no absolute path"},
		{"file:relative", "no absolute path"},
		{"s3:bucket", "no bucket"},
		{"file:///x?y=1", "query"},
		{"s3://", "no bucket"},
		{"s3:///prefix", "no bucket"},
		{"s3://b?foo=1", `unknown parameter "foo"`},
		{"s3://b?path_style=maybe", `path_style "maybe"`},
		{"s3://b?endpoint=ftp://x", `endpoint "ftp://x"`},
		{"s3://b?endpoint=", `endpoint ""`},
		{"s3://b?endpoint=http://", `endpoint "http://"`},
		{"s3://b?region=", "empty region"},
		{"s3://b?region=a&region=b", "given 2 times"},
		{"s3://b/a.b", "prefix: invalid blob key"},
		{"s3://b/a//b", "prefix: invalid blob key"},
		{"s3://b/x#frag", "fragment"},
		{"s3://user:hunter2@b", "AWS_ACCESS_KEY_ID"},
		{"s3://user:hunter2@b/%zz", "invalid URL escape"},
		{"azblob://", "no bucket"},
		{"azblob:container", "no bucket"},
		{"azblob://c?foo=1", `unknown query parameter "foo"`},
		{"azblob://c?protocol=http", `protocol "http" only allowed when IsLocalEmulator is true`},
		{"azblob://c?localemu=true&protocol=http&domain=10.0.0.1:10000", "non-loopback"},
		{"azblob://c/a.b", "prefix: invalid blob key"},
		{"azblob://user:hunter2@c", "AZURE_STORAGE_KEY"},
	}
	for _, tt := range tests {
		_, err := blob.Open(t.Context(), tt.url)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("Open(%q): err = %v, want one mentioning %q", tt.url, err, tt.wantErr)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Open(%q): error shows the password: %v", tt.url, err)
		}
	}
}
