package blob

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"gocloud.dev/blob/azureblob"
)

// AzureConfig configures an Azure Blob Storage store with a shared key. Open's azblob://
// URLs take the account and its credentials from the environment instead.
type AzureConfig struct {
	// ServiceURL is the account's blob endpoint: https://<account>.blob.core.windows.net,
	// or http://127.0.0.1:10000/<account> for Azurite.
	ServiceURL string
	// Container holds the objects; it must exist.
	Container string
	// Prefix, if set, is prepended to every key with a slash ("docs" → "docs/<key>").
	// It follows the key rules (CheckKey).
	Prefix string
	// AccountName and AccountKey are the shared key's account and base64 key.
	AccountName string
	AccountKey  string
}

// NewAzure returns a store in an Azure Blob Storage container (gocloud's azureblob). Put
// stages DefaultPartSize blocks, DefaultConcurrency at once, and commits them only once the
// body has been read whole, so no partial object is ever visible; Azure discards the blocks
// of a failed Put itself. The SDK maps its DefaultConcurrency block buffers outside the Go
// heap. NewAzure makes no request: a missing container shows at the first operation.
func NewAzure(ctx context.Context, cfg AzureConfig) (*Bucket, error) {
	if cfg.Container == "" || cfg.ServiceURL == "" || cfg.AccountName == "" || cfg.AccountKey == "" {
		return nil, errors.New("azure blob store: ServiceURL, Container, AccountName and AccountKey are required")
	}
	cred, err := container.NewSharedKeyCredential(cfg.AccountName, cfg.AccountKey)
	if err != nil {
		return nil, fmt.Errorf("azure blob store: %w", err)
	}
	containerURL, err := url.JoinPath(cfg.ServiceURL, cfg.Container)
	if err != nil {
		return nil, fmt.Errorf("azure blob store: %w", err)
	}
	client, err := container.NewClientWithSharedKeyCredential(containerURL, cred, nil)
	if err != nil {
		return nil, fmt.Errorf("azure blob store: %w", err)
	}
	return openAzure(ctx, client, cfg.Prefix)
}

// openAzureURL opens an azblob://container/prefix URL as gocloud's azureblob URL opener
// does: the account and credentials come from the environment (AZURE_STORAGE_ACCOUNT with
// AZURE_STORAGE_KEY, or AZURE_STORAGE_SAS_TOKEN, or AZURE_STORAGE_CONNECTION_STRING, else
// the default Azure credential chain), the endpoint from AZURE_STORAGE_DOMAIN,
// AZURE_STORAGE_PROTOCOL and AZURE_STORAGE_IS_LOCAL_EMULATOR, which the URL's parameters
// domain, protocol, localemu and storage_account override. The environment is read at each
// call.
func openAzureURL(ctx context.Context, u *url.URL) (*Bucket, error) {
	prefix, err := containerURL(u, "AZURE_STORAGE_KEY or AZURE_STORAGE_CONNECTION_STRING")
	if err != nil {
		return nil, err
	}
	opener := &azureblob.URLOpener{
		MakeClient:        azureblob.NewDefaultClient,
		ServiceURLOptions: *azureblob.NewDefaultServiceURLOptions(),
	}
	gb, err := opener.OpenBucketURL(ctx, &url.URL{Scheme: u.Scheme, Host: u.Host, RawQuery: u.RawQuery})
	if err != nil {
		return nil, err
	}
	return newBucket(gb, prefix)
}

// openAzure returns the store of a container client.
func openAzure(ctx context.Context, client *container.Client, prefix string) (*Bucket, error) {
	gb, err := azureblob.OpenBucket(ctx, client, nil)
	if err != nil {
		return nil, fmt.Errorf("azure blob store: %w", err)
	}
	b, err := newBucket(gb, prefix)
	if err != nil {
		return nil, fmt.Errorf("azure blob store: %w", err)
	}
	return b, nil
}
