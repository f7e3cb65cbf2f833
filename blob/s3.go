package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

var _ Store = (*S3)(nil)

// S3 upload defaults. S3 requires parts of at least 5 MiB (except the last) and allows at
// most 10,000 parts, so with the default part size an object can reach about 48 GiB.
const (
	DefaultPartSize    = 5 << 20
	MinPartSize        = 5 << 20
	DefaultConcurrency = 2
	DefaultRegion      = "us-east-1"
)

// abortTimeout bounds the clean-up of a failed multipart upload, which runs on a fresh
// context so that a cancelled Put still aborts its upload.
const abortTimeout = 30 * time.Second

// S3Config configures an S3 store. Only Bucket is required.
type S3Config struct {
	// Bucket holds the objects; it must exist.
	Bucket string
	// Prefix, if set, is prepended to every key with a slash ("docs" → "docs/<key>").
	// It follows the key rules (CheckKey).
	Prefix string
	// Endpoint is the service's base URL, e.g. "http://127.0.0.1:7070" for a local server.
	// Empty: AWS S3 (or AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, as the SDK reads them).
	Endpoint string
	// Region; empty: the AWS configuration (AWS_REGION, ~/.aws/config), else DefaultRegion.
	Region string
	// PathStyle addresses buckets as <endpoint>/<bucket> instead of <bucket>.<endpoint>;
	// needed by most local servers (MinIO, versitygw).
	PathStyle bool
	// AccessKeyID and SecretAccessKey, if both set, are the credentials. Empty: the SDK's
	// default chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, shared files, instance roles).
	AccessKeyID     string
	SecretAccessKey string
	// PartSize is the multipart part size in bytes (default DefaultPartSize, at least
	// MinPartSize). A Put holds at most about (Concurrency+2)×PartSize in memory.
	PartSize int64
	// Concurrency is the number of parts a Put uploads at once (default DefaultConcurrency).
	Concurrency int
	// HTTPClient, if set, sends the requests (default: the SDK's).
	HTTPClient *http.Client
}

// S3 stores objects in an S3-compatible bucket. Put streams with a multipart upload of
// bounded parts (a single PUT when the body fits in one part) and aborts the upload when it
// fails, so no partial object is ever visible.
type S3 struct {
	client   *s3.Client
	transfer *transfermanager.Client
	bucket   string
	prefix   string // "" or ending in "/"
}

// NewS3 returns an S3 store. It checks the configuration and loads credentials but makes no
// request: a missing bucket shows at the first operation.
func NewS3(ctx context.Context, cfg S3Config) (*S3, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, fmt.Errorf("s3 blob store: %w", err)
	}
	awsCfg, err := loadAWSConfig(ctx, &cfg)
	if err != nil {
		return nil, fmt.Errorf("s3 blob store: %w", err)
	}
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = cfg.PathStyle
		// Ranged and multipart GETs cannot be checked against a whole-object checksum;
		// the SDK would log so on every such read.
		o.DisableLogOutputChecksumValidationSkipped = true
	})
	transfer := transfermanager.New(client, func(o *transfermanager.Options) {
		o.PartSizeBytes = cfg.PartSize
		o.MultipartUploadThreshold = cfg.PartSize
		o.Concurrency = cfg.Concurrency
		o.FailTimeout = abortTimeout
	})
	s := &S3{client: client, transfer: transfer, bucket: cfg.Bucket}
	if cfg.Prefix != "" {
		s.prefix = cfg.Prefix + "/"
	}
	return s, nil
}

// setDefaults checks cfg and fills in its defaults.
func (cfg *S3Config) setDefaults() error {
	if cfg.Bucket == "" {
		return errors.New("no bucket")
	}
	if cfg.Prefix != "" {
		if err := CheckKey(cfg.Prefix); err != nil {
			return fmt.Errorf("prefix: %w", err)
		}
	}
	if (cfg.AccessKeyID == "") != (cfg.SecretAccessKey == "") {
		return errors.New("set both AccessKeyID and SecretAccessKey, or neither")
	}
	if cfg.PartSize == 0 {
		cfg.PartSize = DefaultPartSize
	}
	if cfg.PartSize < MinPartSize {
		return fmt.Errorf("part size %d below the S3 minimum %d", cfg.PartSize, MinPartSize)
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Concurrency < 0 {
		return fmt.Errorf("negative concurrency %d", cfg.Concurrency)
	}
	return nil
}

// loadAWSConfig loads the SDK configuration that cfg does not override.
func loadAWSConfig(ctx context.Context, cfg *S3Config) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	if cfg.Region != "" {
		opts = append(opts, config.WithRegion(cfg.Region))
	}
	if cfg.AccessKeyID != "" {
		opts = append(opts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, "")))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, config.WithHTTPClient(cfg.HTTPClient))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, err
	}
	if awsCfg.Region == "" {
		awsCfg.Region = DefaultRegion
	}
	return awsCfg, nil
}

// objectKey checks key and ctx and returns the object's name in the bucket.
func (s *S3) objectKey(ctx context.Context, key string) (*string, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return aws.String(s.prefix + key), nil
}

// Put implements Store.
func (s *S3) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	name, err := s.objectKey(ctx, key)
	if err != nil {
		return 0, fmt.Errorf("put blob: %w", err)
	}
	// countReader hides any io.Seeker of r: the upload then reads r once, part by part.
	cr := &countReader{ctx: ctx, r: r}
	_, err = s.transfer.UploadObject(ctx, &transfermanager.UploadObjectInput{
		Bucket: aws.String(s.bucket), Key: name, Body: cr,
	})
	if err != nil {
		// Keep the cause a caller tests for (the reader's error, e.g. http.MaxBytesError,
		// or the context's) even where the SDK reports it only as text.
		for _, cause := range []error{cr.err, ctx.Err()} {
			if cause != nil && !errors.Is(err, cause) {
				err = errors.Join(cause, err)
			}
		}
		return 0, fmt.Errorf("put blob %s: %w", key, s3Error(err))
	}
	return cr.n, nil
}

// Open implements Store.
func (s *S3) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	name, err := s.objectKey(ctx, key)
	if err != nil {
		return nil, 0, fmt.Errorf("open blob: %w", err)
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: name})
	if err != nil {
		return nil, 0, fmt.Errorf("open blob %s: %w", key, s3Error(err))
	}
	return out.Body, aws.ToInt64(out.ContentLength), nil
}

// OpenRange implements Store with one ranged GET.
func (s *S3) OpenRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	name, err := s.objectKey(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("open blob: %w", err)
	}
	if off < 0 {
		return nil, fmt.Errorf("open blob %s: negative offset %d", key, off)
	}
	if n == 0 { // HTTP cannot ask for zero bytes
		if _, err := s.Stat(ctx, key); err != nil {
			return nil, err
		}
		return io.NopCloser(strings.NewReader("")), nil
	}
	rng := fmt.Sprintf("bytes=%d-", off)
	if n > 0 {
		rng = fmt.Sprintf("bytes=%d-%d", off, off+n-1)
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{
		Bucket: aws.String(s.bucket), Key: name, Range: aws.String(rng),
	})
	if err != nil {
		if isInvalidRange(err) { // the object exists; off is at or past its end
			return io.NopCloser(strings.NewReader("")), nil
		}
		return nil, fmt.Errorf("open blob %s: %w", key, s3Error(err))
	}
	return out.Body, nil
}

// Stat implements Store.
func (s *S3) Stat(ctx context.Context, key string) (Info, error) {
	name, err := s.objectKey(ctx, key)
	if err != nil {
		return Info{}, fmt.Errorf("stat blob: %w", err)
	}
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: name})
	if err != nil {
		return Info{}, fmt.Errorf("stat blob %s: %w", key, s3Error(err))
	}
	return Info{Size: aws.ToInt64(out.ContentLength), ModTime: aws.ToTime(out.LastModified)}, nil
}

// Delete implements Store.
func (s *S3) Delete(ctx context.Context, key string) error {
	name, err := s.objectKey(ctx, key)
	if err != nil {
		return fmt.Errorf("delete blob: %w", err)
	}
	_, err = s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: name})
	if err != nil {
		if err := s3Error(err); !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("delete blob %s: %w", key, err)
		}
	}
	return nil
}

// s3Error translates an SDK error into the package's sentinels: a missing key (but not a
// missing bucket, which is a configuration error) becomes ErrNotFound.
func s3Error(err error) error {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode() == "NoSuchBucket" {
		return err
	}
	var noKey *types.NoSuchKey
	var notFound *types.NotFound
	var resp *smithyhttp.ResponseError
	if errors.As(err, &noKey) || errors.As(err, &notFound) ||
		errors.As(err, &resp) && resp.HTTPStatusCode() == http.StatusNotFound {
		return fmt.Errorf("%w (%w)", ErrNotFound, err)
	}
	return err
}

// isInvalidRange reports whether err is S3's answer to a range past the end of an object.
func isInvalidRange(err error) bool {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode() == "InvalidRange" {
		return true
	}
	var resp *smithyhttp.ResponseError
	return errors.As(err, &resp) && resp.HTTPStatusCode() == http.StatusRequestedRangeNotSatisfiable
}

// countReader counts what it reads, stops when ctx ends, and remembers the first error.
type countReader struct {
	ctx context.Context
	r   io.Reader
	n   int64
	err error
}

func (c *countReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if err := c.ctx.Err(); err != nil {
		c.err = err
		return 0, err
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		c.err = err
	}
	return n, err
}
