package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/docketq/docket"
)

const (
	apiKeyColumns   = `id, tenant_id, hash, name, created_at, expires_at, revoked_at`
	apiKeyInsertSQL = `INSERT INTO docket_api_keys (` + apiKeyColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?)`
	apiKeyGetSQL    = `SELECT ` + apiKeyColumns + ` FROM docket_api_keys WHERE id = ?`
	apiKeyListSQL   = `SELECT ` + apiKeyColumns + ` FROM docket_api_keys WHERE tenant_id = ? ORDER BY created_at, id`
	apiKeyRevokeSQL = `UPDATE docket_api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE tenant_id = ? AND id = ?`
)

// APIKeyInsert stores a key. A zero CreatedAt is set to now.
func (s *Store) APIKeyInsert(ctx context.Context, k *docket.APIKey) error {
	switch {
	case k.ID == "" || k.TenantID == "":
		return fmt.Errorf("insert api key: %w: id and tenant are required", docket.ErrInvalid)
	case len(k.Hash) == 0:
		return fmt.Errorf("insert api key %q: %w: hash is required", k.ID, docket.ErrInvalid)
	}
	if k.CreatedAt.IsZero() {
		k.CreatedAt = fromMicros(s.clock())
	}
	_, err := s.writeExec(ctx, apiKeyInsertSQL, k.ID, k.TenantID, k.Hash, k.Name,
		toMicros(k.CreatedAt), nullMicros(k.ExpiresAt), nullMicros(k.RevokedAt))
	if err != nil {
		return fmt.Errorf("insert api key %q: %w", k.ID, docsError(err))
	}
	return nil
}

// APIKeyGet returns a key by its public id, or ErrNotFound.
func (s *Store) APIKeyGet(ctx context.Context, id string) (*docket.APIKey, error) {
	k, err := scanAPIKey(s.reader.QueryRowContext(ctx, apiKeyGetSQL, id))
	if err != nil {
		return nil, fmt.Errorf("get api key %q: %w", id, docsError(err))
	}
	return k, nil
}

// APIKeyList returns a tenant's keys, oldest first.
func (s *Store) APIKeyList(ctx context.Context, tenantID string) ([]*docket.APIKey, error) {
	rows, err := s.reader.QueryContext(ctx, apiKeyListSQL, tenantID)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", docsError(err))
	}
	defer rows.Close()
	var out []*docket.APIKey
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, fmt.Errorf("list api keys: %w", docsError(err))
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list api keys: %w", docsError(err))
	}
	return out, nil
}

// APIKeyRevoke marks a key of the tenant revoked now; a key revoked before
// keeps its first revocation time.
func (s *Store) APIKeyRevoke(ctx context.Context, tenantID, id string) error {
	res, err := s.writeExec(ctx, apiKeyRevokeSQL, s.clock(), tenantID, id)
	if err == nil {
		err = affected(res, "api key", id)
	}
	if err != nil {
		return fmt.Errorf("revoke api key: %w", docsError(err))
	}
	return nil
}

func scanAPIKey(s scanner) (*docket.APIKey, error) {
	var (
		key              docket.APIKey
		created          int64
		expires, revoked sql.NullInt64
	)
	if err := s.Scan(&key.ID, &key.TenantID, &key.Hash, &key.Name, &created, &expires, &revoked); err != nil {
		return nil, err
	}
	key.CreatedAt, key.ExpiresAt, key.RevokedAt = fromMicros(created), nullTime(expires), nullTime(revoked)
	return &key, nil
}

// nullMicros stores the zero time as NULL.
func nullMicros(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: toMicros(t), Valid: true}
}
