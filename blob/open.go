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
//	/var/lib/docket/blobs, ./blobs           a local directory (NewLocal)
//	file:///var/lib/docket/blobs             the same, as a URL
//	s3://bucket                              an S3 bucket (NewS3)
//	s3://bucket/prefix?endpoint=http://127.0.0.1:7070&region=us-east-1&path_style=true
//	azblob://container                       an Azure Blob Storage container (NewAzure)
//	azblob://container/prefix?localemu=true&protocol=http&domain=127.0.0.1:10000
//
// S3 query parameters: endpoint (an http or https base URL), region, path_style (a boolean).
// Credentials never appear in the URL: they come from AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY or the rest of the SDK's default chain.
//
// Azure follows gocloud's azureblob conventions: the account and its credentials come from
// AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY (or AZURE_STORAGE_SAS_TOKEN, or
// AZURE_STORAGE_CONNECTION_STRING, else the default Azure credential chain), the endpoint
// from AZURE_STORAGE_DOMAIN, AZURE_STORAGE_PROTOCOL and AZURE_STORAGE_IS_LOCAL_EMULATOR, or
// the query parameters domain, protocol, localemu, cdn and storage_account.
//
// A prefix (the URL's path) is prepended to every key with a slash; it follows the key rules.
// Use NewLocal, NewS3 or NewAzure directly for everything else.
func Open(ctx context.Context, rawURL string) (Store, error) {
	if rawURL == "" {
		return nil, errors.New("blob URL is empty")
	}
	if !strings.Contains(rawURL, "://") && !strings.HasPrefix(rawURL, "s3:") &&
		!strings.HasPrefix(rawURL, "file:") && !strings.HasPrefix(rawURL, "azblob:") {
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
	case "azblob":
		b, err := openAzureURL(ctx, u)
		if err != nil {
			return nil, fmt.Errorf("blob URL %q: %w", u.Redacted(), err)
		}
		return b, nil
	default:
		return nil, fmt.Errorf("blob URL %q: unsupported scheme %q (want a path, file://, s3:// or azblob://)",
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

// containerURL checks the parts of an s3:// or azblob:// URL that name the bucket (or
// container) and returns its prefix. keyEnv names where the credentials go instead of the URL.
func containerURL(u *url.URL, keyEnv string) (prefix string, err error) {
	switch {
	case u.User != nil:
		return "", fmt.Errorf("credentials in the URL are not supported; set %s", keyEnv)
	case u.Host == "" || u.Opaque != "":
		return "", fmt.Errorf("no bucket (want %s://bucket/prefix)", u.Scheme)
	case u.Fragment != "":
		return "", errors.New("fragment not supported")
	}
	prefix = strings.Trim(u.Path, "/")
	if prefix != "" {
		if err := CheckKey(prefix); err != nil {
			return "", fmt.Errorf("prefix: %w", err)
		}
	}
	return prefix, nil
}

// s3URLConfig returns the S3Config of an s3:// URL.
func s3URLConfig(u *url.URL) (S3Config, error) {
	prefix, err := containerURL(u, "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	if err != nil {
		return S3Config{}, err
	}
	cfg := S3Config{Bucket: u.Host, Prefix: prefix}
	for name, values := range u.Query() {
		if len(values) != 1 {
			return S3Config{}, fmt.Errorf("parameter %s given %d times", name, len(values))
		}
		if err := setS3Param(&cfg, name, values[0]); err != nil {
			return S3Config{}, err
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
