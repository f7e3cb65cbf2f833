package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Cluster is a running PostgreSQL server: one started by this process, or an
// external one named by DOCKET_TEST_DATABASE_URL.
type Cluster struct {
	opts Options
	srv  *server // nil for an external server

	external string // base connection string of an external server
	prefix   string // prefix of every database name this cluster creates
	template string // name of the template database
	n        atomic.Int64
}

// Start starts a cluster (or attaches to DOCKET_TEST_DATABASE_URL), creates
// the template database and runs opts.Template on it. Call Stop when done.
func Start(opts Options) (*Cluster, error) {
	opts = opts.withDefaults()
	c := &Cluster{opts: opts}
	if url := os.Getenv(EnvDatabaseURL); url != "" {
		c.external = url
		c.prefix = "docket_" + randomHex(4) + "_"
	} else {
		if os.Getenv(EnvStats) != "" {
			opts.Settings = maps.Clone(opts.Settings)
			if opts.Settings == nil {
				opts.Settings = map[string]string{}
			}
			maps.Copy(opts.Settings, statsSettings())
		}
		srv, err := startServer(opts)
		if err != nil {
			return nil, err
		}
		c.srv = srv
	}
	c.template = c.prefix + "template"
	if err := c.createTemplate(); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

// Stop stops a server started by this process (immediately; no data is
// worth keeping) and removes its directory. On an external server it drops
// the template database.
func (c *Cluster) Stop() error {
	if c.srv == nil {
		return c.dropDatabase(c.template)
	}
	if dir := os.Getenv(EnvStats); dir != "" {
		if err := c.writeStats(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	return c.srv.destroy()
}

// ConnString returns a keyword/value connection string for database dbname.
func (c *Cluster) ConnString(dbname string) string {
	if c.srv == nil {
		return withDatabase(c.external, dbname)
	}
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=%s sslmode=disable",
		c.srv.dir, c.srv.port, dbname)
}

// External reports whether the cluster is an external server.
func (c *Cluster) External() bool { return c.srv == nil }

// DataDir returns the server's data directory ("" for an external server).
func (c *Cluster) DataDir() string {
	if c.srv == nil {
		return ""
	}
	return c.srv.dataDir()
}

// SocketDir returns the directory of the server's Unix socket ("" for an
// external server).
func (c *Cluster) SocketDir() string {
	if c.srv == nil {
		return ""
	}
	return c.srv.dir
}

// TCPAddr returns the loopback address the server listens on when
// Options.TCP is set, else "".
func (c *Cluster) TCPAddr() string {
	if c.srv == nil || !c.opts.TCP {
		return ""
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.srv.port))
}

// PgCtl returns the path of the pg_ctl binary ("" for an external server).
// As root it must run as the postgres user; prefer Restart, StopServer and
// StartServer, which do that.
func (c *Cluster) PgCtl() string {
	if c.srv == nil {
		return ""
	}
	return filepath.Join(c.srv.binDir, "pg_ctl")
}

// PID returns the postmaster's process id, or 0 when it is not running.
func (c *Cluster) PID() int {
	if c.srv == nil {
		return 0
	}
	return c.srv.pid()
}

// Restart restarts the server with `pg_ctl restart -m mode` (smart, fast
// or immediate) and waits until it accepts connections.
func (c *Cluster) Restart(mode string) error {
	if c.srv == nil {
		return ErrExternal
	}
	return c.srv.pgctl(context.Background(), "restart", "-m", mode, "-l", c.srv.logFile())
}

// StopServer stops the server with `pg_ctl stop -m mode`, keeping its data
// directory; StartServer starts it again (after crash recovery when mode
// was immediate).
func (c *Cluster) StopServer(mode string) error {
	if c.srv == nil {
		return ErrExternal
	}
	return c.srv.pgctl(context.Background(), "stop", "-m", mode)
}

// StartServer starts a server stopped by StopServer and waits until it
// accepts connections.
func (c *Cluster) StartServer() error {
	if c.srv == nil {
		return ErrExternal
	}
	return c.srv.pgctl(context.Background(), "start", "-l", c.srv.logFile())
}

// LogTail returns the last lines of the server log, for failure messages.
func (c *Cluster) LogTail() string {
	if c.srv == nil {
		return ""
	}
	return c.srv.logTail()
}

// withDatabase returns connString with its database replaced by dbname.
// Both URL and keyword/value forms are accepted.
func withDatabase(connString, dbname string) string {
	if strings.HasPrefix(connString, "postgres://") || strings.HasPrefix(connString, "postgresql://") {
		rest, query, _ := strings.Cut(connString, "?")
		scheme, hostPart, _ := strings.Cut(rest, "://")
		host, _, _ := strings.Cut(hostPart, "/")
		s := scheme + "://" + host + "/" + dbname
		if query != "" {
			s += "?" + query
		}
		return s
	}
	return connString + " dbname=" + dbname // a later keyword wins
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func withTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
