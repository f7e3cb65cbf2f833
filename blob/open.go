package blob

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Open returns the store that rawURL names:
//
//	/var/lib/docket/blobs, ./blobs           a local directory (Local)
//	file:///var/lib/docket/blobs             the same, as a URL
//	s3://bucket                              an S3 bucket (S3)
//	s3://bucket/prefix?endpoint=http://127.0.0.1:7070&region=us-east-1&path_style=true
//
// S3 query parameters: endpoint (an http or https base URL), region, path_style (a boolean).
// Credentials never appear in the URL: they come from AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY or the rest of the SDK's default chain. Use NewLocal or NewS3
// directly for everything else.
func Open(ctx context.Context, rawURL string) (Store, error) {
	if rawURL == "" {
		return nil, errors.New("blob URL is empty")
	}
	if !strings.Contains(rawURL, "://") && !strings.HasPrefix(rawURL, "s3:") &&
		!strings.HasPrefix(rawURL, "file:") {
		return NewLocal(rawURL)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // without the URL, which may hold a secret
		}
		return nil, fmt.Errorf("blob URL: %w", err)
	}
	switch u.Scheme {
	case "file":
		dir, err := fileURLPath(u)
		if err != nil {
			return nil, fmt.Errorf("blob URL %q: %w", rawURL, err)
		}
		return NewLocal(dir)
	case "s3":
		cfg, err := s3URLConfig(u)
		if err != nil {
			return nil, fmt.Errorf("blob URL %q: %w", u.Redacted(), err)
		}
		return NewS3(ctx, cfg)
	default:
		return nil, fmt.Errorf("blob URL %q: unsupported scheme %q (want a path, file:// or s3://)",
			u.Redacted(), u.Scheme)
	}
}

// fileURLPath returns the directory of a file:// URL.
func fileURLPath(u *url.URL) (string, error) {
	switch {
	case u.Host != "" && u.Host != "localhost":
		return "", fmt.Errorf("host %q not supported (want file:///absolute/path)", u.Host)
	case u.Path == "" || u.Opaque != "":
		return "", errors.New("no absolute path (want file:///absolute/path)")
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return "", errors.New("user, query or fragment not supported")
	}
	return u.Path, nil
}

// s3URLConfig returns the S3Config of an s3:// URL.
func s3URLConfig(u *url.URL) (S3Config, error) {
	if u.User != nil {
		return S3Config{}, errors.New("credentials in the URL are not supported; " +
			"set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	if u.Host == "" || u.Opaque != "" {
		return S3Config{}, errors.New("no bucket (want s3://bucket/prefix)")
	}
	if u.Fragment != "" {
		return S3Config{}, errors.New("fragment not supported")
	}
	cfg := S3Config{Bucket: u.Host, Prefix: strings.Trim(u.Path, "/")}
	for name, values := range u.Query() {
		if len(values) != 1 {
			return S3Config{}, fmt.Errorf("parameter %s given %d times", name, len(values))
		}
		if err := setS3Param(&cfg, name, values[0]); err != nil {
			return S3Config{}, err
		}
	}
	if cfg.Prefix != "" {
		if err := CheckKey(cfg.Prefix); err != nil {
			return S3Config{}, fmt.Errorf("prefix: %w", err)
		}
	}
	return cfg, nil
}

// setS3Param applies one s3:// query parameter to cfg.
func setS3Param(cfg *S3Config, name, value string) error {
	switch name {
	case "endpoint":
		e, err := url.Parse(value)
		if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
			return fmt.Errorf("endpoint %q: want http://host:port or https://host", value)
		}
		cfg.Endpoint = value
	case "region":
		if value == "" {
			return errors.New("empty region")
		}
		cfg.Region = value
	case "path_style":
		b, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("path_style %q: want true or false", value)
		}
		cfg.PathStyle = b
	default:
		return fmt.Errorf("unknown parameter %q (known: endpoint, region, path_style)", name)
	}
	return nil
}
