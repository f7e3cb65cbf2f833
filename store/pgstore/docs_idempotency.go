package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket"
)

// IdempotencyGet returns the record of a key, or ErrNotFound.
func (t *tenantTx) IdempotencyGet(ctx context.Context, key string) (*docket.IdempotencyRecord, error) {
	rec := &docket.IdempotencyRecord{Key: key}
	err := t.tx.QueryRow(ctx, `SELECT request_hash, status_code, body, coalesce(document_id, ''), created_at
FROM docket_idempotency WHERE tenant_id = $1 AND key = $2`, t.tenant, key,
	).Scan(&rec.RequestHash, &rec.StatusCode, &rec.Body, &rec.DocumentID, &rec.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("get idempotency key %q: %w", key, docsError(err))
	}
	return rec, nil
}

// IdempotencyInsert stores a record; a key already recorded is
// ErrDuplicate. ON CONFLICT DO NOTHING leaves the transaction usable
// after a duplicate (no savepoint needed); a concurrent insert of the same
// key waits for the first to commit or roll back.
func (t *tenantTx) IdempotencyInsert(ctx context.Context, rec *docket.IdempotencyRecord) error {
	if rec.Key == "" {
		return fmt.Errorf("insert idempotency record: %w: key is required", docket.ErrInvalid)
	}
	body := rec.Body
	if body == nil {
		body = []byte{}
	}
	err := t.tx.QueryRow(ctx, `INSERT INTO docket_idempotency
    (tenant_id, key, request_hash, status_code, body, document_id)
VALUES ($1, $2, $3, $4, $5, nullif($6, ''))
ON CONFLICT (tenant_id, key) DO NOTHING
RETURNING created_at`,
		t.tenant, rec.Key, rec.RequestHash, rec.StatusCode, body, rec.DocumentID,
	).Scan(&rec.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("insert idempotency key %q: %w", rec.Key, docket.ErrDuplicate)
	}
	if err != nil {
		return fmt.Errorf("insert idempotency key %q: %w", rec.Key, docsError(err))
	}
	return nil
}
