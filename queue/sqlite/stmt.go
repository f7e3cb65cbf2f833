package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// hotStatements are prepared once on the writer connection, after Migrate:
// the statements run per job or per tenant inside batches, where parsing
// would otherwise cost more than executing.
var hotStatements = []string{
	insertJobSQL, getUniqueSQL, markWorkSQL,
	readyTenantsSQL, claimTenantJobsSQL, serveTenantSQL, noWorkSQL,
	recordAttemptSQL, endAttemptSlotSQL, endAttemptJobSQL, freeSlotsSQL,
	heartbeatSQL, progressSQL, expiredLeasesSQL, scheduleSQL,
}

// stmtCache holds the writer's prepared statements. It is filled once and
// then only read.
type stmtCache struct {
	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
}

// prepare prepares the hot statements on db. It waits for the writer's
// one connection, so it must not hold c.mu meanwhile: a transaction on
// that connection may be reading the cache.
func (c *stmtCache) prepare(ctx context.Context, db *sql.DB) error {
	if c.ready() {
		return nil
	}
	stmts := make(map[string]*sql.Stmt, len(hotStatements))
	for _, q := range hotStatements {
		s, err := db.PrepareContext(ctx, q) //nolint:sqlclosecheck // kept for the driver's life; closed by Close
		if err != nil {
			_ = closeAll(stmts)
			return fmt.Errorf("prepare statements: %w", err)
		}
		stmts[q] = s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stmts != nil { // a concurrent Migrate was first
		return closeAll(stmts)
	}
	c.stmts = stmts
	return nil
}

func (c *stmtCache) ready() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.stmts != nil
}

func (c *stmtCache) get(query string) *sql.Stmt {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.stmts[query]
}

func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	err := closeAll(c.stmts)
	c.stmts = nil
	return err
}

func closeAll(stmts map[string]*sql.Stmt) error {
	var errs []error
	for _, s := range stmts {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

// stmt returns query prepared in the transaction: the writer's prepared
// statement bound to it when there is one (our own transactions), else
// prepared once per transaction (the caller's). database/sql closes them
// when the transaction ends.
func (t *txn) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s, ok := t.stmts[query]; ok {
		return s, nil
	}
	var s *sql.Stmt
	if p := t.cache.get(query); p != nil && t.own {
		s = t.tx.StmtContext(ctx, p)
	} else {
		var err error
		if s, err = t.tx.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
	}
	if t.stmts == nil {
		t.stmts = make(map[string]*sql.Stmt)
	}
	t.stmts[query] = s
	return s, nil
}

// The statements exec, query and queryRow use belong to the transaction,
// which closes them.

func (t *txn) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	s, err := t.stmt(ctx, query) //nolint:sqlclosecheck // closed with the transaction
	if err != nil {
		return nil, err
	}
	return s.ExecContext(ctx, args...)
}

func (t *txn) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := t.stmt(ctx, query) //nolint:sqlclosecheck // closed with the transaction
	if err != nil {
		return nil, err
	}
	return s.QueryContext(ctx, args...)
}

// queryRow runs a one-row query; a failed prepare shows in Scan.
func (t *txn) queryRow(ctx context.Context, query string, args ...any) rowScanner {
	s, err := t.stmt(ctx, query) //nolint:sqlclosecheck // closed with the transaction
	if err != nil {
		return errRow{err}
	}
	return s.QueryRowContext(ctx, args...)
}

type rowScanner interface {
	Scan(dest ...any) error
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
