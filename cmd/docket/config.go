package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/sqlite"
	"github.com/docketq/docket/store/pgstore"
	"github.com/docketq/docket/store/sqlitestore"
)

// storeFlags are the flags every command that opens the store shares; each
// has an environment variable.
type storeFlags struct {
	databaseURL string
	dataDir     string
	logLevel    string
	logFormat   string
	// waitReady, set by the long-running commands (serve, worker), makes
	// open wait out a PostgreSQL that refuses for now (every connection
	// taken, starting up), telling it of each retry; the short commands
	// fail at once.
	waitReady func(err error, wait time.Duration)
	// checkPG, set by serve and worker too, checks a PostgreSQL database
	// before open migrates it (checkPostgres); an error ends the open.
	checkPG func(ctx context.Context, d *postgres.Driver) error
	// process, set by serve and worker, names the process's PostgreSQL
	// sessions (postgres.ProcessName), so that each can count the others
	// sharing a connection budget (checkPostgres).
	process string
}

func (f *storeFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&f.databaseURL, "database-url", getenv("DATABASE_URL"),
		"PostgreSQL URL (postgres://...) or keyword/value string (host=a,b ... target_session_attrs=read-write); "+
			"empty uses embedded SQLite in the data dir [DATABASE_URL]")
	fs.StringVar(&f.dataDir, "data-dir", envOr(getenv, "DOCKET_DATA_DIR", "./docket-data"),
		"directory for the embedded database and local blobs [DOCKET_DATA_DIR]")
	fs.StringVar(&f.logLevel, "log-level", envOr(getenv, "DOCKET_LOG_LEVEL", "info"),
		"debug, info, warn or error [DOCKET_LOG_LEVEL]")
	fs.StringVar(&f.logFormat, "log-format", envOr(getenv, "DOCKET_LOG_FORMAT", "text"),
		"text (key=value) or json, one object per line [DOCKET_LOG_FORMAT]")
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

func (f *storeFlags) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", f.logLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch f.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", f.logFormat)
}

// open opens and migrates the store the flags name.
func (f *storeFlags) open(ctx context.Context) (driver.Driver, error) {
	var (
		d   driver.Driver
		err error
	)
	switch u := f.databaseURL; {
	case u == "":
		if err := os.MkdirAll(f.dataDir, 0o700); err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
		path := filepath.Join(f.dataDir, "docket.db")
		if err := privateFile(path); err != nil {
			return nil, err
		}
		d, err = sqlite.Open(ctx, path)
	case isPostgres(u) && f.waitReady != nil:
		d, err = postgres.OpenWaiting(ctx, u, f.process, f.waitReady)
	case isPostgres(u):
		d, err = postgres.Open(ctx, u)
	case strings.HasPrefix(u, "sqlite://"):
		path := strings.TrimPrefix(u, "sqlite://")
		if err := privateFile(path); err != nil {
			return nil, err
		}
		d, err = sqlite.Open(ctx, path)
	default:
		return nil, fmt.Errorf("--database-url: want postgres://..., postgresql://..., host=... or sqlite://PATH, got %q", redact(u))
	}
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if pd, ok := d.(*postgres.Driver); ok && f.checkPG != nil {
		if err := f.checkPG(ctx, pd); err != nil {
			_ = d.Close()
			return nil, err
		}
	}
	store, _ := documents(d)
	if err := store.Migrate(ctx); err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return d, nil
}

// documentStore is the document store over an engine driver: docket.Store,
// and Migrate, which migrates the engine and then the store.
type documentStore interface {
	docket.Store
	Migrate(ctx context.Context) error
}

// documents returns the document store that shares d's database, or false
// for a driver without one.
func documents(d driver.Driver) (documentStore, bool) {
	switch d := d.(type) {
	case *postgres.Driver:
		return pgstore.New(d), true
	case *sqlite.Driver:
		return sqlitestore.New(d), true
	}
	return nil, false
}

// embedded reports whether the flags name an embedded SQLite store (the
// data dir's or a sqlite:// one), which serves one process.
func (f *storeFlags) embedded() bool { return !isPostgres(f.databaseURL) }

// isPostgres reports whether a --database-url names PostgreSQL: a URL
// (postgres://, postgresql://) or a keyword/value connection string
// ("host=/a,/b port=5432,5433 dbname=docket"). Both forms may list several
// hosts, with target_session_attrs=read-write choosing the primary among
// them (docs/operations.md, "Running on a PostgreSQL HA pair").
func isPostgres(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://") || isKeywordValue(u)
}

// isKeywordValue reports whether s is a libpq keyword/value connection
// string: its first word is one of libpq's keywords followed by "=".
func isKeywordValue(s string) bool {
	key, _, ok := strings.Cut(strings.TrimSpace(s), "=")
	if !ok || strings.Contains(s, "://") {
		return false
	}
	switch strings.TrimSpace(key) {
	case "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "service",
		"sslmode", "connect_timeout", "application_name", "options", "target_session_attrs":
		return true
	}
	return false
}

// keywordSecret is a password of a keyword/value connection string, quoted
// or not.
var keywordSecret = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// privateFile creates the database file readable by its owner only (0600),
// or makes an existing one so: SQLite gives its WAL and shared-memory
// files the database file's mode.
func privateFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("database file: %w", err)
	}
	err = f.Chmod(0o600)
	if err = errors.Join(err, f.Close()); err != nil {
		return fmt.Errorf("database file: %w", err)
	}
	return nil
}

// redact hides the secrets of a URL for messages: the password of its user
// information ((*url.URL).Redacted) and query values whose names say they
// are secrets (PostgreSQL's password=, an S3 secret). A string that does
// not parse as a URL is shown without anything between "://" and "@".
func redact(raw string) string {
	if isKeywordValue(raw) {
		return keywordSecret.ReplaceAllString(raw, "${1}xxxxx")
	}
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.LastIndex(raw, "@"); i >= 0 {
			if j := strings.Index(raw, "://"); j >= 0 && j < i {
				return raw[:j+3] + "xxxxx" + raw[i:]
			}
		}
		return raw
	}
	if q := u.Query(); len(q) > 0 {
		changed := false
		for k := range q {
			if lk := strings.ToLower(k); strings.Contains(lk, "password") || strings.Contains(lk, "secret") || strings.Contains(lk, "token") {
				q.Set(k, "xxxxx")
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	return u.Redacted()
}
