package sqlitestore

import (
	"context"
	"fmt"

	"github.com/docketq/docket"
)

const (
	idemGetSQL = `SELECT key, request_hash, status_code, body, document_id, created_at
FROM docket_idempotency WHERE tenant_id = ? AND key = ?`
	idemInsertSQL = `INSERT INTO docket_idempotency (tenant_id, key, request_hash, status_code, body,
	document_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`
)

// IdempotencyGet returns the tenant's record of key, or ErrNotFound.
func (t *tenantTx) IdempotencyGet(ctx context.Context, key string) (*docket.IdempotencyRecord, error) {
	var (
		rec     docket.IdempotencyRecord
		created int64
	)
	err := t.tx.QueryRowContext(ctx, idemGetSQL, t.tenant, key).Scan(&rec.Key, &rec.RequestHash,
		&rec.StatusCode, &rec.Body, &rec.DocumentID, &created)
	if err != nil {
		return nil, fmt.Errorf("get idempotency key %q: %w", key, docsError(err))
	}
	rec.CreatedAt = fromMicros(created)
	return &rec, nil
}

// IdempotencyInsert stores a record of the tenant; a key already recorded
// is ErrDuplicate (the transaction stays usable on SQLite). A zero
// CreatedAt is set to now.
func (t *tenantTx) IdempotencyInsert(ctx context.Context, rec *docket.IdempotencyRecord) error {
	if err := t.writable("insert idempotency record"); err != nil {
		return err
	}
	if rec.Key == "" {
		return fmt.Errorf("insert idempotency record: %w: key is required", docket.ErrInvalid)
	}
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = fromMicros(t.s.clock())
	}
	body := rec.Body
	if body == nil {
		body = []byte{}
	}
	_, err := t.tx.ExecContext(ctx, idemInsertSQL, t.tenant, rec.Key, rec.RequestHash, rec.StatusCode,
		body, rec.DocumentID, toMicros(rec.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert idempotency key %q: %w", rec.Key, docsError(err))
	}
	return nil
}
