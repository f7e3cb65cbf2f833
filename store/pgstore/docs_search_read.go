package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket"
)

// readScopeSQL is scopeSQL for a scoped read (scopedRead), which also makes
// its transaction read-only (as ReadTenant's is): allowed at any point of
// a transaction, unlike the way back to read-write.
const readScopeSQL = `SELECT set_config('role', '` + appRole + `', true), set_config('app.tenant_id', $1, true),
    set_config('transaction_read_only', 'on', true)`

// ChunkSearch is what ReadTenant(tenantID) and its transaction's
// ChunkSearch(p) do, each search in one round trip instead of four
// (BEGIN, the tenant scope, the search, COMMIT): the scope and the search
// are sent together (scopedRead). Each search (a compound's, then its
// words' when that finds nothing) is a transaction of its own.
func (s *Store) ChunkSearch(ctx context.Context, tenantID string, p *docket.ChunkSearchParams) ([]*docket.SearchHit, error) {
	if tenantID == "" {
		return nil, fmt.Errorf("%w: tenant is required", docket.ErrInvalid)
	}
	return searchChunks(tenantID, p, func(args []any) (hits []*docket.SearchHit, err error) {
		err = s.scopedRead(ctx, tenantID, chunkSearchSQL, args, func(rows pgx.Rows) error {
			hits, err = scanHits(rows, tenantID)
			return err
		})
		return hits, err
	})
}

// scopedRead runs the statement sql with args in a read-only transaction
// scoped to tenantID, as the app role under row-level security, as
// ReadTenant's are, and hands its rows to scan; in one round trip. The
// scope and the statement are one pgx batch: one pipeline, which
// PostgreSQL runs as one implicit transaction that ends at the pipeline's
// Sync, where the scope's transaction-local settings end with it (and a
// failed statement rolls it back), before the connection goes back to the
// pool.
func (s *Store) scopedRead(ctx context.Context, tenantID, sql string, args []any, scan func(pgx.Rows) error) error {
	b := &pgx.Batch{}
	b.Queue(readScopeSQL, tenantID)
	b.Queue(sql, args...)
	br := s.pool.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return fmt.Errorf("scope read to tenant: %w", docsError(err))
	}
	rows, err := br.Query()
	if err != nil {
		err = fmt.Errorf("scoped read: %w", docsError(err))
	} else {
		err = scan(rows)
	}
	if cerr := br.Close(); err == nil && cerr != nil {
		err = docsError(cerr)
	}
	return err
}
