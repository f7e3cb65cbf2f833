package blobtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The S3 server the S3 backend is tested against: Versity's versitygw, pinned in
// scripts/test.sh (VERSITYGW_VERSION), which builds it into ./bin (`make tools`).
const (
	versitygwBin = "versitygw"
	// SkipS3Env, set to 1, skips the tests that need versitygw.
	SkipS3Env = "DOCKET_SKIP_S3"
)

// S3Server is a running versitygw with its POSIX backend in a temporary directory.
type S3Server struct {
	Endpoint  string // http://127.0.0.1:<port>
	Region    string
	AccessKey string
	SecretKey string
	Client    *s3.Client // path-style client with the root credentials
}

// StartS3Server starts versitygw on a free loopback port for the test and stops it (by its
// process id) when the test ends. It looks for the binary in <repo root>/bin, then on PATH;
// if it is missing the test fails (run `make tools`), unless DOCKET_SKIP_S3=1 skips it.
func StartS3Server(tb testing.TB) *S3Server {
	tb.Helper()
	if os.Getenv(SkipS3Env) == "1" {
		tb.Skipf("%s=1: skipping the tests against a real S3 server", SkipS3Env)
	}
	bin, err := findBin(versitygwBin)
	if err != nil {
		tb.Fatalf("%v: run `make tools` (scripts/test.sh --only tools) to build it into ./bin, "+
			"or set %s=1 to skip the S3 tests", err, SkipS3Env)
	}
	s := &S3Server{Region: "us-east-1", AccessKey: "docket-test-access", SecretKey: "docket-test-secret-key"}
	dir := tb.TempDir()
	for attempt := 1; ; attempt++ {
		// A free port can be taken between picking and binding it: retry with another.
		err = s.start(tb, bin, dir)
		if err == nil || attempt == 3 {
			break
		}
		tb.Logf("versitygw attempt %d: %v", attempt, err)
	}
	if err != nil {
		tb.Fatalf("start versitygw: %v", err)
	}
	s.Client = s3.New(s3.Options{
		BaseEndpoint: aws.String(s.Endpoint),
		Region:       s.Region,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
		UsePathStyle: true,
	})
	return s
}

// start runs versitygw on a free port with its data in dir and waits until it answers.
func (s *S3Server) start(tb testing.TB, bin, dir string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var out syncBuffer
	exited, stop, err := startProc(&out, bin, "--port", addr, "--access", s.AccessKey, "--secret", s.SecretKey,
		"--region", s.Region, "--quiet", "posix", dir)
	if err != nil {
		return err
	}
	s.Endpoint = "http://" + addr
	if err := waitReady(s.Endpoint, exited); err != nil {
		stop()
		return fmt.Errorf("%w; output:\n%s", err, out.String())
	}
	tb.Cleanup(func() {
		stop()
		if tb.Failed() {
			tb.Logf("versitygw output:\n%s", out.String())
		}
	})
	return nil
}

// waitReady polls endpoint until it answers HTTP, the process exits, or 30 s pass.
func waitReady(endpoint string, exited <-chan struct{}) error {
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	client := &http.Client{Timeout: time.Second}
	for {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, endpoint, http.NoBody)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			return nil // any answer, even 403, means it serves
		}
		select {
		case <-exited:
			return errors.New("versitygw exited")
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("versitygw not answering on %s after 30s", endpoint)
		}
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// CreateBucket creates a bucket.
func (s *S3Server) CreateBucket(tb testing.TB, name string) {
	tb.Helper()
	if _, err := s.Client.CreateBucket(tb.Context(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		tb.Fatalf("create bucket %s: %v", name, err)
	}
}

// Uploads lists the unfinished multipart uploads in bucket under prefix: what a failed Put
// must not leave behind.
func (s *S3Server) Uploads(tb testing.TB, bucket, prefix string) []string {
	tb.Helper()
	out, err := s.Client.ListMultipartUploads(tb.Context(), &s3.ListMultipartUploadsInput{
		Bucket: aws.String(bucket), Prefix: aws.String(prefix),
	})
	if err != nil {
		tb.Fatalf("list multipart uploads: %v", err)
	}
	var keys []string
	for _, u := range out.Uploads {
		keys = append(keys, "upload of "+aws.ToString(u.Key))
	}
	return keys
}
