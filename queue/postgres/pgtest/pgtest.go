// Package pgtest runs a throwaway PostgreSQL cluster for tests.
//
// One cluster serves a whole `go test` process: TestMain calls [Main] (or
// [Start] and [Cluster.Stop]), and each test asks [NewDatabase] for a fresh
// database copied from a template that an optional hook prepared once (for
// example by running migrations):
//
//	func TestMain(m *testing.M) {
//		pgtest.Main(m, pgtest.Options{Template: migrate})
//	}
//
//	func TestSomething(t *testing.T) {
//		connString := pgtest.NewDatabase(t) // dropped in t.Cleanup
//		...
//	}
//
// The cluster listens only on a Unix socket in its own temporary directory
// (no port collisions), runs with fsync off unless Options.Durable is set,
// and is stopped with `pg_ctl stop -m immediate` at the end. Binaries are
// found on PATH (initdb, pg_ctl), else in /usr/lib/postgresql/*/bin. initdb
// refuses to run as root, so as root every server command runs through
// `runuser -u postgres --` and the temporary directory belongs to postgres.
//
// When DOCKET_TEST_DATABASE_URL is set, no cluster is started: databases are
// created on that server instead, and the methods that control the server
// process (Restart, StopServer, StartServer) return ErrExternal.
package pgtest

import (
	"errors"
	"fmt"
	"time"
)

// EnvDatabaseURL names the environment variable that points the tests at an
// existing server instead of a throwaway cluster.
const EnvDatabaseURL = "DOCKET_TEST_DATABASE_URL"

// ErrExternal is returned by the methods that control the server process
// when the cluster is an external server (DOCKET_TEST_DATABASE_URL).
var ErrExternal = errors.New("pgtest: external server: not started by this process")

// Options configure a cluster. The zero value is a fast, non-durable
// cluster with 200 connections.
type Options struct {
	// Durable turns fsync, synchronous_commit, full_page_writes and
	// autovacuum on (for crash tests). Default: all four off, for speed: a
	// test that needs statistics or a vacuum runs ANALYZE or VACUUM itself,
	// and autovacuum's passes over each test's fixtures cost the suite CPU.
	Durable bool

	// MaxConnections is max_connections. Default 200.
	MaxConnections int

	// TCP makes the server listen on a free loopback TCP port as well (for
	// fault-proxy tests); see Cluster.TCPAddr.
	TCP bool

	// Settings are extra postgresql.conf settings, written verbatim
	// (name = value), e.g. {"autovacuum_naptime": "1s"}. Quote string
	// values yourself: {"log_statement": "'all'"}.
	Settings map[string]string

	// Template, when set, runs once against the template database right
	// after it is created (for example to run migrations); every database
	// from NewDatabase is a copy of its result. It must close its
	// connections before returning.
	Template func(connString string) error

	// Env are extra environment variables (KEY=value) of the server's
	// commands (initdb, pg_ctl and so the server), e.g. LD_PRELOAD and
	// FAKETIME to run the server under libfaketime (the chaos package's
	// clock-skew tests).
	Env []string

	// Timeout bounds each server command (initdb, start, stop). Default 60s.
	Timeout time.Duration

	// Logf, when set, receives progress lines (commands run and timings).
	Logf func(format string, args ...any)
}

func (o Options) withDefaults() Options {
	if o.MaxConnections == 0 {
		o.MaxConnections = 200
	}
	if o.Timeout == 0 {
		o.Timeout = 60 * time.Second
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return o
}

// conf returns the postgresql.conf lines for the options.
func (o Options) conf(socketDir string, tcpPort int) string {
	onOff := "off"
	if o.Durable {
		onOff = "on"
	}
	listen := "''"
	port := 5432
	if o.TCP {
		listen, port = "'127.0.0.1'", tcpPort
	}
	s := fmt.Sprintf(`
# testpg
listen_addresses = %s
port = %d
unix_socket_directories = '%s'
max_connections = %d
fsync = %s
synchronous_commit = %s
full_page_writes = %s
logging_collector = off
log_min_messages = warning
autovacuum = %s
`, listen, port, socketDir, o.MaxConnections, onOff, onOff, onOff, onOff)
	for k, v := range o.Settings {
		s += fmt.Sprintf("%s = %s\n", k, v)
	}
	return s
}
