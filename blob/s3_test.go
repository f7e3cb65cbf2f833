package blob_test

import (
	"bytes"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/blob/blobtest"
)

const testBucket = "docket-blobs"

// s3Fixture is one versitygw server with one bucket, shared by a test's subtests; each
// subtest gets its own key prefix.
type s3Fixture struct {
	srv  *blobtest.S3Server
	next atomic.Int64
}

func newS3Fixture(tb testing.TB) *s3Fixture {
	tb.Helper()
	srv := blobtest.StartS3Server(tb)
	srv.CreateBucket(tb, testBucket)
	return &s3Fixture{srv: srv}
}

// config returns the configuration of a store with a fresh prefix.
func (f *s3Fixture) config() blob.S3Config {
	return blob.S3Config{
		Bucket:          testBucket,
		Prefix:          fmt.Sprintf("test-%d", f.next.Add(1)),
		Endpoint:        f.srv.Endpoint,
		Region:          f.srv.Region,
		PathStyle:       true,
		AccessKeyID:     f.srv.AccessKey,
		SecretAccessKey: f.srv.SecretKey,
	}
}

// store returns an S3 store with a fresh prefix.
func (f *s3Fixture) store(tb testing.TB) (*blob.Bucket, blob.S3Config) {
	tb.Helper()
	cfg := f.config()
	s, err := blob.NewS3(tb.Context(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return s, cfg
}

func TestS3(t *testing.T) {
	f := newS3Fixture(t)
	blobtest.Run(t, func(t *testing.T) blobtest.Backend {
		s, cfg := f.store(t)
		return blobtest.Backend{Store: s, Leftovers: func(t *testing.T) []string {
			return f.srv.Uploads(t, testBucket, cfg.Prefix+"/")
		}}
	})
}

func TestS3_OpenURL(t *testing.T) {
	f := newS3Fixture(t)
	t.Setenv("AWS_ACCESS_KEY_ID", f.srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", f.srv.SecretKey)
	url := fmt.Sprintf("s3://%s/via-url?endpoint=%s&region=%s&path_style=true",
		testBucket, f.srv.Endpoint, f.srv.Region)
	s, err := blob.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(*blob.Bucket); !ok {
		t.Fatalf("Open(%q) = %T, want *blob.Bucket", url, s)
	}
	if _, err := s.Put(t.Context(), "t/k", bytes.NewReader([]byte("via url"))); err != nil {
		t.Fatal(err)
	}
	// The prefix is part of the object's name in the bucket.
	if _, err := f.srv.Client.HeadObject(t.Context(), headInput(testBucket, "via-url/t/k")); err != nil {
		t.Fatalf("object not at via-url/t/k: %v", err)
	}
}

func TestS3_MissingBucketIsNotNotFound(t *testing.T) {
	f := newS3Fixture(t)
	cfg := f.config()
	cfg.Bucket = "no-such-bucket"
	s, err := blob.NewS3(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Open, not Stat: a HEAD response has no body to name the missing bucket.
	_, _, err = s.Open(t.Context(), "t/k")
	if err == nil || errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Open in a missing bucket: err = %v, want an error other than ErrNotFound", err)
	}
}

func headInput(bucket, key string) *s3.HeadObjectInput {
	return &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
}
