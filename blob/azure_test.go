package blob_test

import (
	"bytes"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/blob/blobtest"
)

const testContainer = "docket-blobs"

// azureFixture is one Azurite server with one container, shared by a test's subtests; each
// subtest gets its own key prefix.
type azureFixture struct {
	srv  *blobtest.AzureServer
	next atomic.Int64
}

func newAzureFixture(tb testing.TB) *azureFixture {
	tb.Helper()
	srv := blobtest.StartAzureServer(tb)
	srv.CreateContainer(tb, testContainer)
	return &azureFixture{srv: srv}
}

// config returns the configuration of a store with a fresh prefix.
func (f *azureFixture) config() blob.AzureConfig {
	return blob.AzureConfig{
		ServiceURL:  f.srv.ServiceURL,
		Container:   testContainer,
		Prefix:      fmt.Sprintf("test-%d", f.next.Add(1)),
		AccountName: blobtest.AzuriteAccount,
		AccountKey:  blobtest.AzuriteKey,
	}
}

// store returns an Azure store with a fresh prefix.
func (f *azureFixture) store(tb testing.TB) *blob.Bucket {
	tb.Helper()
	s, err := blob.NewAzure(tb.Context(), f.config())
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestAzure runs against one Azurite server: starting node takes seconds.
func TestAzure(t *testing.T) {
	f := newAzureFixture(t)
	// Azure keeps the blocks of a failed Put uncommitted, out of every reader's view, and
	// discards them itself: there are no leftovers to look for. The SDK's block buffers are
	// mapped outside the Go heap, so StreamLarge's heap check holds trivially here.
	t.Run("Conformance", func(t *testing.T) {
		blobtest.Run(t, func(t *testing.T) blobtest.Backend {
			return blobtest.Backend{Store: f.store(t)}
		})
	})
	t.Run("OpenURL", func(t *testing.T) { testAzureOpenURL(t, f) })
	t.Run("MissingContainerIsNotNotFound", func(t *testing.T) { testAzureMissingContainer(t, f) })
}

// An azblob:// URL takes the account, its key and the endpoint from the environment.
func testAzureOpenURL(t *testing.T, f *azureFixture) {
	f.srv.SetEnv(t)
	s, err := blob.Open(t.Context(), "azblob://"+testContainer+"/via-url")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(t.Context(), "t/k", bytes.NewReader([]byte("via url"))); err != nil {
		t.Fatal(err)
	}
	// The prefix is part of the blob's name in the container.
	c := f.srv.Container(t, testContainer)
	if _, err := c.NewBlobClient("via-url/t/k").GetProperties(t.Context(), nil); err != nil {
		t.Fatalf("blob not at via-url/t/k: %v", err)
	}
}

func testAzureMissingContainer(t *testing.T, f *azureFixture) {
	cfg := f.config()
	cfg.Container = "no-such-container"
	s, err := blob.NewAzure(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Open, not Stat: a HEAD response has no body to name the missing container.
	_, _, err = s.Open(t.Context(), "t/k")
	if err == nil || errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Open in a missing container: err = %v, want an error other than ErrNotFound", err)
	}
}
