package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/sqlite"
)

// TestDatabaseOrServer: --server goes through the admin API without
// opening the database; otherwise the database is used; when a running
// serve holds the embedded database, its admin API is, and stderr says
// so; held without a serve URL, the lock is the error.
func TestDatabaseOrServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sf := &storeFlags{dataDir: t.TempDir()}
	call := func(server string) (string, string, error) {
		var stderr bytes.Buffer
		way, err := databaseOrServer(ctx, sf, server, &stderr,
			func(d driver.Driver) (string, error) {
				if _, err := queue.NewClient(d, queue.ClientConfig{}).Periodic(ctx); err != nil {
					return "", err
				}
				return "database", nil
			},
			func(base string) (string, error) { return "server " + base, nil })
		return way, stderr.String(), err
	}

	if way, _, err := call("http://127.0.0.1:1"); err != nil || way != "server http://127.0.0.1:1" {
		t.Fatalf("with --server: %q, %v; want the given server", way, err)
	}
	if way, _, err := call(""); err != nil || way != "database" {
		t.Fatalf("without --server: %q, %v; want the database", way, err)
	}

	held, err := sf.open(ctx) // as a running serve holds it
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, _, err := call(""); !errors.Is(err, sqlite.ErrLocked) {
		t.Fatalf("held, no serve URL: %v, want sqlite.ErrLocked", err)
	}
	remove, err := writeServeURL(sf.dataDir, "http://127.0.0.1:2")
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	way, stderr, err := call("")
	if err != nil || way != "server http://127.0.0.1:2" {
		t.Fatalf("held by a serve: %q, %v; want that serve's admin API", way, err)
	}
	if !strings.Contains(stderr, "going through its admin API at http://127.0.0.1:2") {
		t.Errorf("stderr %q does not say it goes through the serve", stderr)
	}
}
