package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue/driver"
)

// Tenant deletion: the tombstone, the purge in batches and the end, as
// docket/tenant_delete.go specifies; the tombstone's row is in
// docket_tenant_deletions (migrations/004_tenant_delete.sql). It mirrors
// postgres/docs_tenant_delete.go; SQLite's one writer serialises the
// tombstone with uploads, so it needs no lock of its own.

// tenantLive keeps out of the tenant reads a tenant whose deletion has
// begun.
const tenantLive = `NOT EXISTS (SELECT 1 FROM docket_tenant_deletions x WHERE x.tenant_id = docket_tenants.id)`

// The tombstone's statements, in its transaction's order: the state, the
// row, the keys, the running jobs (their leases end), then the pause
// (the engine's TenantPauseSet).
const (
	tenantDeleteStateSQL = `SELECT EXISTS (SELECT 1 FROM docket_tenants WHERE id = ?1),
       EXISTS (SELECT 1 FROM docket_tenant_deletions WHERE tenant_id = ?1 AND finished_at IS NULL)`
	tenantTombstoneSQL = `INSERT INTO docket_tenant_deletions (tenant_id, started_at) VALUES (?, ?)
ON CONFLICT (tenant_id) DO NOTHING`
	tenantKeysDeleteSQL = `DELETE FROM docket_api_keys WHERE tenant_id = ?`
	tenantJobsCancelSQL = `UPDATE docket_jobs SET state = 'cancelled', error_message = 'tenant deleted',
    completed_at = ?2, lease_token = 0, lease_expires_at = NULL, updated_at = ?2
WHERE tenant_id = ?1 AND state = 'running'`
)

// The purge's statements: at most ?2 rows of tenant ?1 each.
const (
	tenantDocsBatchSQL  = `SELECT id, blob_key FROM docket_documents WHERE tenant_id = ?1 LIMIT ?2`
	tenantDocsDeleteSQL = `DELETE FROM docket_documents WHERE tenant_id = ? AND id IN (%s)`
	tenantJobsDeleteSQL = `DELETE FROM docket_jobs
WHERE id IN (SELECT id FROM docket_jobs WHERE tenant_id = ?1 ORDER BY id LIMIT ?2)`
	tenantIdemDeleteSQL = `DELETE FROM docket_idempotency
WHERE tenant_id = ?1 AND key IN (SELECT key FROM docket_idempotency WHERE tenant_id = ?1 LIMIT ?2)`
	tenantSlotsDeleteSQL = `DELETE FROM docket_rate_slots
WHERE id IN (SELECT id FROM docket_rate_slots WHERE tenant_id = ?1 LIMIT ?2)`
)

// The end's statements: whether a document or job was written after the
// purge looked (then the purge goes round again), and the rest.
const (
	tenantRemainsSQL = `SELECT EXISTS (SELECT 1 FROM docket_documents WHERE tenant_id = ?1)
    OR EXISTS (SELECT 1 FROM docket_jobs WHERE tenant_id = ?1)`
)

// tenantEndSQL is the rest of the end, statement by statement (?1 the
// tenant, ?2 now).
var tenantEndSQL = []string{
	`DELETE FROM docket_tenant_queues WHERE tenant_id = ?1`,
	`DELETE FROM docket_tenant_limits WHERE tenant_id = ?1`,
	`DELETE FROM docket_tenant_pauses WHERE tenant_id = ?1`,
	`DELETE FROM docket_api_keys WHERE tenant_id = ?1`,
	`DELETE FROM docket_tenants WHERE id = ?1`,
	`UPDATE docket_tenant_deletions SET finished_at = ?2 WHERE tenant_id = ?1`,
}

// tenantDeleteRounds bounds how often the end sends the purge round again
// because rows were written meanwhile.
const tenantDeleteRounds = 3

// TenantDelete deletes a tenant and everything it owns, or resumes its
// deletion; see docket.Store.
func (s *Store) TenantDelete(ctx context.Context, params *docket.TenantDeleteParams) (*docket.TenantDeleteResult, error) {
	batch, err := tenantDeleteBatch(params)
	if err != nil {
		return nil, fmt.Errorf("delete tenant: %w", err)
	}
	res := &docket.TenantDeleteResult{}
	if res.Resumed, err = s.tenantTombstone(ctx, params.ID); err != nil {
		return nil, fmt.Errorf("delete tenant %q: %w", params.ID, err)
	}
	if params.Begun != nil {
		params.Begun()
	}
	for range tenantDeleteRounds {
		if err := s.tenantPurge(ctx, params, batch, res); err != nil {
			return res, fmt.Errorf("delete tenant %q (run it again to finish): %w", params.ID, err)
		}
		done, err := s.tenantEnd(ctx, params.ID)
		if err != nil {
			return res, fmt.Errorf("delete tenant %q (run it again to finish): %w", params.ID, err)
		}
		if done {
			return res, nil
		}
	}
	return res, fmt.Errorf("delete tenant %q: %w: its rows are still being written; run it again", params.ID, docket.ErrConflict)
}

// tenantDeleteBatch checks params and returns the batch size.
func tenantDeleteBatch(params *docket.TenantDeleteParams) (int, error) {
	switch {
	case params == nil || params.ID == "":
		return 0, fmt.Errorf("%w: a tenant id is required", docket.ErrInvalid)
	case params.BatchSize < 0:
		return 0, fmt.Errorf("%w: batch size %d is negative", docket.ErrInvalid, params.BatchSize)
	case params.BatchSize == 0:
		return docket.DefaultTenantDeleteBatch, nil
	}
	return params.BatchSize, nil
}

// tenantTombstone begins the deletion (or finds it begun: resumed).
func (s *Store) tenantTombstone(ctx context.Context, id string) (resumed bool, err error) {
	err = s.docsWrite(ctx, func(tx *sql.Tx, now int64) error {
		var exists bool
		if err := tx.QueryRowContext(ctx, tenantDeleteStateSQL, id).Scan(&exists, &resumed); err != nil {
			return err
		}
		if !exists {
			return docket.ErrNotFound
		}
		steps := []struct {
			sql  string
			args []any
		}{
			{tenantTombstoneSQL, []any{id, now}},
			{tenantKeysDeleteSQL, []any{id}},
			{tenantJobsCancelSQL, []any{id, now}},
		}
		for _, step := range steps {
			if _, err := tx.ExecContext(ctx, step.sql, step.args...); err != nil {
				return err
			}
		}
		return s.enginePause(ctx, tx, id)
	})
	return resumed, err
}

// enginePause pauses the tenant in every queue, in tx: the engine's
// statements (Executor.TenantPauseSet).
func (s *Store) enginePause(ctx context.Context, tx *sql.Tx, id string) error {
	x, err := s.d.UnwrapTx(tx)
	if err != nil {
		return err
	}
	return x.TenantPauseSet(ctx, &driver.TenantPauseParams{TenantID: id, Paused: true})
}

// tenantPurge deletes the tenant's rows in batches, blobs before their
// documents, and counts them into res.
func (s *Store) tenantPurge(ctx context.Context, params *docket.TenantDeleteParams, batch int, res *docket.TenantDeleteResult) error {
	for {
		n, err := s.tenantDocsBatch(ctx, params, batch)
		res.Documents += n
		if err != nil {
			return err
		}
		if n < batch {
			break
		}
	}
	for _, step := range []struct {
		sql   string
		count *int
	}{{tenantJobsDeleteSQL, &res.Jobs}, {tenantIdemDeleteSQL, &res.Records}, {tenantSlotsDeleteSQL, &res.Records}} {
		for {
			var n int64
			err := s.docsWrite(ctx, func(tx *sql.Tx, _ int64) error {
				r, err := tx.ExecContext(ctx, step.sql, params.ID, batch)
				if err != nil {
					return err
				}
				n, err = r.RowsAffected()
				return err
			})
			if err != nil {
				return err
			}
			*step.count += int(n)
			if n < int64(batch) {
				break
			}
		}
	}
	return nil
}

// tenantDocsBatch deletes one batch of documents: their blobs, then their
// rows (chunks go with them). The blobs are deleted outside the writer.
func (s *Store) tenantDocsBatch(ctx context.Context, params *docket.TenantDeleteParams, batch int) (int, error) {
	ids, keys, err := s.tenantDocsRead(ctx, params.ID, batch)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	if params.DeleteBlobs != nil && len(keys) > 0 {
		if err := params.DeleteBlobs(ctx, keys); err != nil {
			return 0, fmt.Errorf("delete blobs: %w", err)
		}
	}
	args := make([]any, 0, len(ids)+1)
	args = append(args, params.ID)
	for _, id := range ids {
		args = append(args, id)
	}
	q := fmt.Sprintf(tenantDocsDeleteSQL, strings.TrimSuffix(strings.Repeat("?,", len(ids)), ","))
	var n int64
	err = s.docsWrite(ctx, func(tx *sql.Tx, _ int64) error {
		r, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		return err
	})
	return int(n), err
}

// tenantDocsRead reads a batch of the tenant's documents: ids, blob keys.
func (s *Store) tenantDocsRead(ctx context.Context, tenant string, batch int) (ids, keys []string, err error) {
	rows, err := s.reader.QueryContext(ctx, tenantDocsBatchSQL, tenant, batch)
	if err != nil {
		return nil, nil, docsError(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, key string
		if err := rows.Scan(&id, &key); err != nil {
			return nil, nil, docsError(err)
		}
		ids = append(ids, id)
		if key != "" {
			keys = append(keys, key)
		}
	}
	return ids, keys, docsError(rows.Err())
}

// tenantEnd removes the tenant row and the engine's rows of it and marks
// the deletion finished, unless a document or job was written since the
// purge looked (done false: purge again).
func (s *Store) tenantEnd(ctx context.Context, id string) (done bool, err error) {
	errRemains := errors.New("rows remain")
	err = s.docsWrite(ctx, func(tx *sql.Tx, now int64) error {
		var remains bool
		if err := tx.QueryRowContext(ctx, tenantRemainsSQL, id).Scan(&remains); err != nil {
			return err
		}
		if remains {
			return errRemains
		}
		for _, q := range tenantEndSQL {
			if _, err := tx.ExecContext(ctx, q, id, now); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errRemains) {
		return false, nil
	}
	return err == nil, err
}

// notDeleted refuses a tenant whose deletion has begun (ErrNotFound).
func (t *tenantTx) notDeleted(ctx context.Context) error {
	var gone bool
	err := t.tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM docket_tenant_deletions WHERE tenant_id = ?)`, t.tenant).Scan(&gone)
	if err != nil {
		return docsError(err)
	}
	if gone {
		return fmt.Errorf("%w: tenant %q is deleted", docket.ErrNotFound, t.tenant)
	}
	return nil
}

// tenantDeletionListSQL lists the deletions begun and not finished, oldest
// first, at most ?1 (-1: every one).
const tenantDeletionListSQL = `SELECT tenant_id, started_at FROM docket_tenant_deletions
WHERE finished_at IS NULL ORDER BY started_at, tenant_id LIMIT ?1`

// TenantDeletionList returns the deletions begun and not finished; see
// docket.Store.
func (s *Store) TenantDeletionList(ctx context.Context, params *docket.TenantDeletionListParams) ([]*docket.TenantDeletion, error) {
	limit := -1
	if params != nil && params.Limit < 0 {
		return nil, fmt.Errorf("list tenant deletions: %w: limit %d is negative", docket.ErrInvalid, params.Limit)
	}
	if params != nil && params.Limit > 0 {
		limit = params.Limit
	}
	rows, err := s.reader.QueryContext(ctx, tenantDeletionListSQL, limit)
	if err != nil {
		return nil, fmt.Errorf("list tenant deletions: %w", docsError(err))
	}
	defer rows.Close()
	var out []*docket.TenantDeletion
	for rows.Next() {
		var id string
		var started int64
		if err := rows.Scan(&id, &started); err != nil {
			return nil, fmt.Errorf("list tenant deletions: %w", docsError(err))
		}
		out = append(out, &docket.TenantDeletion{TenantID: id, StartedAt: fromMicros(started)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tenant deletions: %w", docsError(err))
	}
	return out, nil
}
