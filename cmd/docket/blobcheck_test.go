package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/blob/blobtest"
)

// The start-up check passes on a store of each backend, opened from its --blob-url, and fails
// on one whose bucket or container is missing.
func TestCheckBlobs(t *testing.T) {
	check := func(t *testing.T, url string, wantOK bool) {
		t.Helper()
		blobs, err := blob.Open(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		err = checkBlobs(t.Context(), blobs, url)
		if ok := err == nil; ok != wantOK {
			t.Fatalf("checkBlobs(%s) = %v, want success %v", url, err, wantOK)
		}
		if err != nil && !strings.Contains(err.Error(), "cannot be used: write") {
			t.Fatalf("checkBlobs(%s) = %v, want a failed write", url, err)
		}
	}
	t.Run("Local", func(t *testing.T) { check(t, "file://"+t.TempDir(), true) })
	t.Run("S3", func(t *testing.T) {
		srv := blobtest.StartS3Server(t)
		srv.CreateBucket(t, "docs")
		t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
		t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
		check(t, "s3://docs/check?path_style=true&endpoint="+srv.Endpoint, true)
		check(t, "s3://missing?path_style=true&endpoint="+srv.Endpoint, false)
	})
	t.Run("Azure", func(t *testing.T) {
		srv := blobtest.StartAzureServer(t)
		srv.CreateContainer(t, "docs")
		srv.SetEnv(t)
		check(t, "azblob://docs/check", true)
		check(t, "azblob://missing", false)
	})
}

// A worker whose blob store refuses it says so at start and does not run.
func TestWorker_BlobStoreUnreachable(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	s3 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`))
	}))
	defer s3.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr syncBuffer
	err := run(ctx, []string{"worker", "--blob-url", "s3://docs?endpoint=" + s3.URL + "&path_style=true"},
		env(map[string]string{"DOCKET_DATA_DIR": t.TempDir()}), &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "blob store s3://docs") || !strings.Contains(err.Error(), "cannot be used: write") {
		t.Fatalf("worker with a blob store that refuses it: %v", err)
	}
	if strings.Contains(stderr.String(), "worker started") {
		t.Errorf("the worker started:\n%s", stderr.String())
	}
}

// docket worker on PostgreSQL with blobs in a local directory warns that
// other hosts cannot see it.
func TestWorker_LocalBlobsOnPostgres(t *testing.T) {
	t.Parallel()
	db := newPGDatabase(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"worker"}, env(map[string]string{"DATABASE_URL": db.url, "DOCKET_DATA_DIR": t.TempDir()}), &stdout, &stderr)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), "worker started") {
		if time.Now().After(deadline) {
			t.Fatalf("no worker start:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(stderr.String(), `level=WARN msg="BLOB STORE IS A LOCAL DIRECTORY: servers and workers on other hosts cannot read it`) {
		t.Errorf("no warning about the local blob directory:\n%s", stderr.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("worker: %v", err)
	}
}
