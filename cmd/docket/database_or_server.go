package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/sqlite"
)

// databaseOrServer is how every command that can work either on the
// database or through a server's admin API (queue health, queue and
// tenants pause|resume, jobs show, periodic list, and any such command
// added later) picks the way:
//
//   - with --server (server != ""): remote(server);
//   - else on the database: local(d), d closed after;
//   - else, when the database is the embedded SQLite file that a running
//     serve holds (sqlite.ErrLocked, and the serve wrote its URL into the
//     data dir): remote(that serve's URL), saying so on stderr.
//
// Any other error opening the database is returned as it is.
func databaseOrServer[T any](ctx context.Context, sf *storeFlags, server string, stderr io.Writer,
	local func(d driver.Driver) (T, error), remote func(base string) (T, error)) (T, error) {
	if server != "" {
		return remote(server)
	}
	d, err := sf.open(ctx)
	if base := readServeURL(sf.dataDir); errors.Is(err, sqlite.ErrLocked) && sf.embedded() && base != "" {
		fmt.Fprintf(stderr, "docket: serve is running on %s; going through its admin API at %s\n", sf.dataDir, base)
		return remote(base)
	}
	if err != nil {
		var zero T
		return zero, err
	}
	defer d.Close()
	return local(d)
}
