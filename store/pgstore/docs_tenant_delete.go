package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
)

// Tenant deletion: the tombstone, the purge in batches and the end, as
// docket/tenant_delete.go specifies; the tombstone's row is in
// docket_tenant_deletions (migrations/006_tenant_delete.sql). Every statement runs as the
// owner, across row-level security. store/sqlitestore/docs_tenant_delete.go
// mirrors this file.

// tenantLive keeps out of the tenant reads a tenant whose deletion has
// begun.
const tenantLive = `NOT EXISTS (SELECT FROM docket_tenant_deletions x WHERE x.tenant_id = docket_tenants.id)`

// The tombstone's statements, in its transaction's order: the tenant's
// upload lock (rateLockClass: uploads taking a slot now commit first), the
// state, the row, the keys, the running jobs (locked in id order; their
// leases end), then the pause (the engine's TenantPauseSet: claim rows
// after jobs, the engine's lock order).
const (
	tenantUploadLockSQL  = `SELECT pg_advisory_xact_lock($1, hashtext($2))`
	tenantDeleteStateSQL = `SELECT EXISTS (SELECT FROM docket_tenants WHERE id = $1),
       EXISTS (SELECT FROM docket_tenant_deletions WHERE tenant_id = $1 AND finished_at IS NULL)`
	tenantTombstoneSQL = `INSERT INTO docket_tenant_deletions (tenant_id) VALUES ($1)
ON CONFLICT (tenant_id) DO NOTHING`
	tenantKeysDeleteSQL = `DELETE FROM docket_api_keys WHERE tenant_id = $1`
	tenantJobsCancelSQL = `UPDATE docket_jobs j SET state = 'cancelled', error_message = 'tenant deleted',
    completed_at = clock_timestamp(), lease_token = 0, lease_expires_at = NULL, updated_at = clock_timestamp()
FROM (SELECT id FROM docket_jobs WHERE tenant_id = $1 AND state = 'running' ORDER BY id FOR UPDATE) r
WHERE j.id = r.id`
)

// The purge's statements: at most $2 rows of tenant $1 each.
const (
	tenantDocsBatchSQL  = `SELECT id, blob_key FROM docket_documents WHERE tenant_id = $1 LIMIT $2`
	tenantDocsDeleteSQL = `DELETE FROM docket_documents WHERE tenant_id = $1 AND id = ANY($2)`
	// The engine's statement (its indexes decide how to find a tenant's
	// jobs); the tombstone cancelled the running ones and paused the
	// tenant, and one that is running still (none should) keeps the end
	// from finishing: tenantRemainsSQL sees it, and the next call's
	// tombstone cancels it.
	tenantJobsDeleteSQL = postgres.TenantJobsDeleteSQL
	tenantIdemDeleteSQL = `DELETE FROM docket_idempotency d
USING (SELECT key FROM docket_idempotency WHERE tenant_id = $1 LIMIT $2) k
WHERE d.tenant_id = $1 AND d.key = k.key`
	tenantSlotsDeleteSQL = `DELETE FROM docket_rate_slots
WHERE id IN (SELECT id FROM docket_rate_slots WHERE tenant_id = $1 LIMIT $2)`
)

// The end's statements: whether a document or job was written after the
// purge looked (then the purge goes round again), and the rest in one
// statement (foreign keys are checked at its end, when the keys are gone).
const (
	tenantRemainsSQL = `SELECT EXISTS (SELECT FROM docket_documents WHERE tenant_id = $1) OR (` + postgres.TenantJobsRemainSQL + `)`
	tenantEndSQL     = `WITH q AS (
    DELETE FROM docket_tenant_queues WHERE (queue, tenant_id) IN
        (SELECT queue, tenant_id FROM docket_tenant_queues WHERE tenant_id = $1 ORDER BY queue FOR UPDATE)
), f AS (DELETE FROM docket_tenant_freed WHERE tenant_id = $1
), l AS (DELETE FROM docket_tenant_limits WHERE tenant_id = $1
), p AS (DELETE FROM docket_tenant_pauses WHERE tenant_id = $1
), s AS (DELETE FROM docket_search_configs WHERE tenant_id = $1
), k AS (DELETE FROM docket_api_keys WHERE tenant_id = $1
), t AS (DELETE FROM docket_tenants WHERE id = $1
)
UPDATE docket_tenant_deletions SET finished_at = clock_timestamp() WHERE tenant_id = $1`
)

// tenantDeleteRounds bounds how often the end sends the purge round again
// because rows were written meanwhile (a job retried with a key still
// cached by another server).
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
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, tenantUploadLockSQL, int32(rateLockClass), id); err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, tenantDeleteStateSQL, id).Scan(&exists, &resumed); err != nil {
			return err
		}
		if !exists {
			return docket.ErrNotFound
		}
		for _, sql := range []string{tenantTombstoneSQL, tenantKeysDeleteSQL, tenantJobsCancelSQL} {
			if _, err := tx.Exec(ctx, sql, id); err != nil {
				return err
			}
		}
		return s.enginePause(ctx, tx, id)
	})
	return resumed, docsError(err)
}

// enginePause pauses the tenant in every queue, in tx: the engine's
// statement (Executor.TenantPauseSet), which locks claim rows after jobs,
// the engine's lock order.
func (s *Store) enginePause(ctx context.Context, tx pgx.Tx, id string) error {
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
			tag, err := s.pool.Exec(ctx, step.sql, params.ID, batch)
			if err != nil {
				return docsError(err)
			}
			*step.count += int(tag.RowsAffected())
			if tag.RowsAffected() < int64(batch) {
				break
			}
		}
	}
	return nil
}

// tenantDocsBatch deletes one batch of documents: their blobs, then their
// rows (chunks go with them).
func (s *Store) tenantDocsBatch(ctx context.Context, params *docket.TenantDeleteParams, batch int) (int, error) {
	rows, err := s.pool.Query(ctx, tenantDocsBatchSQL, params.ID, batch)
	if err != nil {
		return 0, docsError(err)
	}
	var ids, keys []string
	var id, key string
	if _, err := pgx.ForEachRow(rows, []any{&id, &key}, func() error {
		ids = append(ids, id)
		if key != "" {
			keys = append(keys, key)
		}
		return nil
	}); err != nil {
		return 0, docsError(err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	if params.DeleteBlobs != nil && len(keys) > 0 {
		if err := params.DeleteBlobs(ctx, keys); err != nil {
			return 0, fmt.Errorf("delete blobs: %w", err)
		}
	}
	tag, err := s.pool.Exec(ctx, tenantDocsDeleteSQL, params.ID, ids)
	if err != nil {
		return 0, docsError(err)
	}
	return int(tag.RowsAffected()), nil
}

// tenantEnd removes the tenant row and the engine's rows of it and marks
// the deletion finished, unless a document or job was written since the
// purge looked (done false: purge again).
func (s *Store) tenantEnd(ctx context.Context, id string) (done bool, err error) {
	errRemains := errors.New("rows remain")
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var remains bool
		if err := tx.QueryRow(ctx, tenantRemainsSQL, id).Scan(&remains); err != nil {
			return err
		}
		if remains {
			return errRemains
		}
		_, err := tx.Exec(ctx, tenantEndSQL, id)
		return err
	})
	if errors.Is(err, errRemains) {
		return false, nil
	}
	return err == nil, docsError(err)
}

// notDeleted refuses a tenant whose deletion has begun (ErrNotFound). It
// runs after the tenant's upload lock, so it sees a tombstone committed by
// whoever held the lock before.
func (t *tenantTx) notDeleted(ctx context.Context) error {
	var gone bool
	if err := t.tx.QueryRow(ctx, `SELECT EXISTS (SELECT FROM docket_tenant_deletions WHERE tenant_id = $1)`, t.tenant).Scan(&gone); err != nil {
		return docsError(err)
	}
	if gone {
		return fmt.Errorf("%w: tenant %q is deleted", docket.ErrNotFound, t.tenant)
	}
	return nil
}

// tenantDeletionListSQL lists the deletions begun and not finished, oldest
// first, at most $1 (NULL: every one).
const tenantDeletionListSQL = `SELECT tenant_id, started_at FROM docket_tenant_deletions
WHERE finished_at IS NULL ORDER BY started_at, tenant_id LIMIT $1`

// TenantDeletionList returns the deletions begun and not finished; see
// docket.Store.
func (s *Store) TenantDeletionList(ctx context.Context, params *docket.TenantDeletionListParams) ([]*docket.TenantDeletion, error) {
	var limit *int
	if params != nil && params.Limit < 0 {
		return nil, fmt.Errorf("list tenant deletions: %w: limit %d is negative", docket.ErrInvalid, params.Limit)
	}
	if params != nil && params.Limit > 0 {
		limit = &params.Limit
	}
	rows, err := s.pool.Query(ctx, tenantDeletionListSQL, limit)
	if err != nil {
		return nil, fmt.Errorf("list tenant deletions: %w", docsError(err))
	}
	var out []*docket.TenantDeletion
	var d docket.TenantDeletion
	if _, err := pgx.ForEachRow(rows, []any{&d.TenantID, &d.StartedAt}, func() error {
		out = append(out, &docket.TenantDeletion{TenantID: d.TenantID, StartedAt: d.StartedAt.UTC()})
		return nil
	}); err != nil {
		return nil, fmt.Errorf("list tenant deletions: %w", docsError(err))
	}
	return out, nil
}
