package blob

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob/s3blob"
)

// DefaultRegion is the S3 region when neither S3Config nor the AWS configuration names one.
const DefaultRegion = "us-east-1"

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
	// HTTPClient, if set, sends the requests (default: the SDK's).
	HTTPClient *http.Client
}

// NewS3 returns a store in an S3 bucket (gocloud's s3blob). Put streams with a multipart
// upload of DefaultPartSize parts (a single PUT when the body fits in one part) and aborts
// the upload when it fails, so no partial object is ever visible. NewS3 checks the
// configuration and loads credentials but makes no request: a missing bucket shows at the
// first operation.
func NewS3(ctx context.Context, cfg S3Config) (*Bucket, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("s3 blob store: no bucket")
	}
	if (cfg.AccessKeyID == "") != (cfg.SecretAccessKey == "") {
		return nil, errors.New("s3 blob store: set both AccessKeyID and SecretAccessKey, or neither")
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
		// Ranged GETs cannot be checked against a whole-object checksum; the SDK would
		// log so on every such read.
		o.DisableLogOutputChecksumValidationSkipped = true
	})
	gb, err := s3blob.OpenBucket(ctx, client, cfg.Bucket, &s3blob.Options{
		RequestChecksumCalculation: awsCfg.RequestChecksumCalculation,
	})
	if err != nil {
		return nil, fmt.Errorf("s3 blob store: %w", err)
	}
	b, err := newBucket(gb, cfg.Prefix)
	if err != nil {
		return nil, fmt.Errorf("s3 blob store: %w", err)
	}
	// Every Put's upload runs with this transfer manager (see Bucket.put): s3blob's own would
	// buffer up to 16 MiB before its first part, and would abort a cancelled upload on the
	// cancelled context, which leaves the upload behind.
	b.transfer = transfermanager.New(client, func(o *transfermanager.Options) {
		o.PartSizeBytes = DefaultPartSize
		o.MultipartUploadThreshold = DefaultPartSize
		o.Concurrency = DefaultConcurrency
		o.FailTimeout = abortTimeout
		o.RequestChecksumCalculation = awsCfg.RequestChecksumCalculation
	})
	return b, nil
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
