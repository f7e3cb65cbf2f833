package blobtest

import (
	"errors"
	"net/url"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// The Azure Blob Storage server the Azure backend is tested against: Microsoft's Azurite,
// the npm package pinned in scripts/test.sh (AZURITE_VERSION), which installs it and links
// its azurite-blob into ./bin (`make tools`).
const (
	azuriteBin = "azurite-blob"
	// SkipAzureEnv, set to 1, skips the tests that need Azurite.
	SkipAzureEnv = "DOCKET_SKIP_AZURE"
)

// Azurite's well-known development account, the one it serves by default.
const (
	AzuriteAccount = "devstoreaccount1"
	AzuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// azuriteListening is the line Azurite prints once it serves, with the port it bound.
var azuriteListening = regexp.MustCompile(`listens on (http://127\.0\.0\.1:[0-9]+)`)

// AzureServer is a running Azurite blob service with its data in a temporary directory.
type AzureServer struct {
	Host       string // 127.0.0.1:<port>
	ServiceURL string // http://127.0.0.1:<port>/devstoreaccount1
}

// StartAzureServer starts Azurite's blob service on a loopback port it picks itself, for the
// test, and stops it (by its process id) when the test ends. It looks for azurite-blob in
// <repo root>/bin, then on PATH; if it is missing the test fails (run `make tools`), unless
// DOCKET_SKIP_AZURE=1 skips it.
func StartAzureServer(tb testing.TB) *AzureServer {
	tb.Helper()
	if os.Getenv(SkipAzureEnv) == "1" {
		tb.Skipf("%s=1: skipping the tests against Azurite", SkipAzureEnv)
	}
	bin, err := findBin(azuriteBin)
	if err != nil {
		tb.Fatalf("%v: run `make tools` (scripts/test.sh --only tools) to install it into ./bin, "+
			"or set %s=1 to skip the Azure tests", err, SkipAzureEnv)
	}
	var out syncBuffer
	exited, stop, err := startProc(&out, bin, "--blobHost", "127.0.0.1", "--blobPort", "0",
		"--location", tb.TempDir(), "--skipApiVersionCheck", "--loose", "--silent", "--disableTelemetry")
	if err != nil {
		tb.Fatalf("start Azurite: %v", err)
	}
	endpoint, err := waitListening(&out, exited)
	if err != nil {
		stop()
		tb.Fatalf("start Azurite: %v; output:\n%s", err, out.String())
	}
	tb.Cleanup(func() {
		stop()
		if tb.Failed() {
			tb.Logf("Azurite output:\n%s", out.String())
		}
	})
	u, err := url.Parse(endpoint)
	if err != nil {
		tb.Fatal(err)
	}
	return &AzureServer{Host: u.Host, ServiceURL: endpoint + "/" + AzuriteAccount}
}

// waitListening waits until out shows that Azurite listens, and returns its endpoint.
func waitListening(out *syncBuffer, exited <-chan struct{}) (string, error) {
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if m := azuriteListening.FindStringSubmatch(out.String()); m != nil {
			return m[1], nil
		}
		select {
		case <-exited:
			return "", errors.New("azurite-blob exited")
		case <-deadline.C:
			return "", errors.New("azurite-blob not listening after 60s")
		case <-tick.C:
		}
	}
}

// SetEnv points gocloud's azureblob URL conventions at the server for the test: the account,
// its key and the local emulator's address.
func (s *AzureServer) SetEnv(t *testing.T) {
	t.Setenv("AZURE_STORAGE_ACCOUNT", AzuriteAccount)
	t.Setenv("AZURE_STORAGE_KEY", AzuriteKey)
	t.Setenv("AZURE_STORAGE_DOMAIN", s.Host)
	t.Setenv("AZURE_STORAGE_PROTOCOL", "http")
	t.Setenv("AZURE_STORAGE_IS_LOCAL_EMULATOR", "true")
}

// Container returns a client of the named container with the account's shared key.
func (s *AzureServer) Container(tb testing.TB, name string) *container.Client {
	tb.Helper()
	cred, err := container.NewSharedKeyCredential(AzuriteAccount, AzuriteKey)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := container.NewClientWithSharedKeyCredential(s.ServiceURL+"/"+name, cred, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// CreateContainer creates a container.
func (s *AzureServer) CreateContainer(tb testing.TB, name string) {
	tb.Helper()
	if _, err := s.Container(tb, name).Create(tb.Context(), nil); err != nil {
		tb.Fatalf("create container %s: %v", name, err)
	}
}
