package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/docketq/docket/queue/driver"
)

var _ driver.Driver = (*Driver)(nil)

// Config configures a Driver.
type Config struct {
	// Path is the database file. It is created when missing; its directory
	// must exist. A lock file Path+".lock" sits next to it.
	Path string

	// Synchronous is SQLite's synchronous setting for the writer: "FULL"
	// (the default) syncs the write-ahead log at every commit, so a commit
	// that returned survives a power loss or OS crash; "NORMAL" syncs only
	// at checkpoints: faster, survives a crash of the process, but an OS
	// crash or power loss may roll back the last commits.
	Synchronous string

	// ReadConns bounds the pool of read-only connections. Default 4.
	ReadConns int

	// BusyTimeout is how long a statement waits for a lock held outside the
	// driver (a checkpoint, a sqlite3 shell reading the file). Default 5s.
	BusyTimeout time.Duration

	// Now is the store's clock. Default time.Now. For tests.
	Now func() time.Time
}

// Driver is a driver.Driver on one SQLite database file, for one process.
type Driver struct {
	writer *sql.DB // one connection: every write transaction, in turn
	reader *sql.DB // read-only connections, which never wait for the writer
	lock   *os.File
	now    func() time.Time
	exec   *executor
	stmts  stmtCache  // the writer's prepared statements
	turns  writeTurns // whose write transaction has the writer
	// orphans ends the leases of a dead process once, at the first Migrate.
	orphans sync.Once
}

// Open opens (creating it if needed) the database at path with the default
// configuration. Call Migrate before use.
func Open(ctx context.Context, path string) (*Driver, error) {
	return OpenConfig(ctx, Config{Path: path})
}

// OpenConfig opens the database cfg describes. It fails with an error
// wrapping ErrLocked when another process (or another Driver in this one)
// has the database open.
func OpenConfig(ctx context.Context, cfg Config) (*Driver, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	lock, err := lockFile(cfg.Path)
	if err != nil {
		return nil, err
	}
	d := &Driver{lock: lock, now: cfg.Now, turns: writeTurns{now: time.Now}}
	d.exec = &executor{d: d}
	if err := d.open(ctx, &cfg); err != nil {
		_ = d.Close()
		return nil, err
	}
	// On a migrated database the statements prepare now; on a new one
	// they fail, and Migrate prepares them.
	_ = d.stmts.prepare(ctx, d.writer)
	return d, nil
}

func (c *Config) setDefaults() error {
	switch {
	case c.Path == "" || c.Path == ":memory:" || strings.HasPrefix(c.Path, "file:"):
		return fmt.Errorf("%w: sqlite: path %q: want a file path", driver.ErrInvalid, c.Path)
	case strings.ContainsRune(c.Path, '?'):
		return fmt.Errorf("%w: sqlite: path %q contains '?'", driver.ErrInvalid, c.Path)
	}
	abs, err := filepath.Abs(c.Path)
	if err != nil {
		return fmt.Errorf("sqlite: path %q: %w", c.Path, err)
	}
	c.Path = abs
	c.Synchronous = strings.ToUpper(c.Synchronous)
	switch c.Synchronous {
	case "":
		c.Synchronous = "FULL"
	case "FULL", "NORMAL", "EXTRA":
	default:
		return fmt.Errorf("%w: sqlite: synchronous %q: want FULL or NORMAL", driver.ErrInvalid, c.Synchronous)
	}
	if c.ReadConns <= 0 {
		c.ReadConns = 4
	}
	if c.BusyTimeout <= 0 {
		c.BusyTimeout = 5 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// open opens the writer first, so the file is in WAL mode before any
// reader connects.
func (d *Driver) open(ctx context.Context, cfg *Config) error {
	busy := fmt.Sprintf("_pragma=busy_timeout(%d)", cfg.BusyTimeout.Milliseconds())
	w, err := sql.Open("sqlite", dsn(cfg.Path, busy, "_txlock=immediate",
		"_pragma=journal_mode(WAL)", "_pragma=foreign_keys(1)",
		"_pragma=synchronous("+cfg.Synchronous+")", "_pragma=cache_size(-32000)"))
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	d.writer = w
	var mode string
	if err := w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", cfg.Path, interpretError(err))
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("sqlite: open %s: journal mode is %q, want wal (is the file on a local file system?)", cfg.Path, mode)
	}
	// Readers get the writer's page cache size too: with SQLite's default
	// of 2 MB a search at 10^6 chunks did not keep its own pages between
	// its steps (ranking 2,000 FTS5 matches of "x-achse": 160-200 ms warm,
	// 40-80 ms with 32-64 MB; docs/benchmarks.md).
	r, err := sql.Open("sqlite", dsn(cfg.Path, busy, "_pragma=query_only(1)", "_pragma=foreign_keys(1)",
		"_pragma=cache_size(-32000)"))
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	r.SetMaxOpenConns(cfg.ReadConns)
	r.SetMaxIdleConns(cfg.ReadConns)
	d.reader = r
	return nil
}

func dsn(path string, params ...string) string {
	// Not a URI: SQLite takes the path as it is (it holds no '?').
	return path + "?" + strings.Join(params, "&")
}

// DB returns the writer's handle. Transactions for Client.EnqueueTx and
// Task.CompleteTx must be begun on it (or with BeginWrite, which also
// waits for its turn among the store's writes; one begun here waits for
// the connection outside the turns). While such a transaction is open,
// every other write of the store waits for it: keep it short, and do not
// make other store writes from the goroutine that holds it.
func (d *Driver) DB() *sql.DB { return d.writer }

// ReadDB returns the pool of read-only connections, for code that shares
// the engine's database (a document store): a transaction begun on it
// reads one snapshot and never waits for the writer.
func (d *Driver) ReadDB() *sql.DB { return d.reader }

// Now returns the driver's clock (Config.Now), for code that shares the
// engine's database and must write times that agree with the engine's.
func (d *Driver) Now() time.Time { return d.now() }

// Executor runs each operation in its own transaction.
func (d *Driver) Executor() driver.Executor { return d.exec }

// UnwrapTx returns an executor bound to tx, a *sql.Tx begun on DB().
func (d *Driver) UnwrapTx(tx any) (driver.Executor, error) {
	sqlTx, ok := tx.(*sql.Tx)
	if !ok || sqlTx == nil {
		return nil, fmt.Errorf("%w: sqlite: UnwrapTx of %T, want *sql.Tx", driver.ErrInvalid, tx)
	}
	return &executor{d: d, tx: sqlTx}, nil
}

// Notifier returns nil: one process uses the store, and the engine
// notifies in process.
func (d *Driver) Notifier() driver.Notifier { return nil }

// Capabilities reports one process, no cross-process notifications and no
// SQL enqueue function.
func (d *Driver) Capabilities() driver.Capabilities {
	return driver.Capabilities{MultiProcess: false, Notify: false, SQLEnqueue: false}
}

// Close closes the database and releases the lock file.
func (d *Driver) Close() error {
	errs := []error{d.stmts.close()}
	if d.reader != nil {
		errs = append(errs, d.reader.Close())
	}
	if d.writer != nil {
		errs = append(errs, d.writer.Close())
	}
	if d.lock != nil {
		errs = append(errs, unlockFile(d.lock))
		d.lock = nil
	}
	return errors.Join(errs...)
}

// clock returns the store's now in unix microseconds.
func (d *Driver) clock() int64 { return d.now().UnixMicro() }
