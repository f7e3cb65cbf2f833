package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket"
)

const apiKeyColumns = `id, tenant_id, hash, name, created_at, expires_at, revoked_at`

// APIKeyInsert stores a key. A taken id is ErrDuplicate; an unknown tenant
// ErrNotFound. key.CreatedAt is set to the database's now when zero.
func (s *Store) APIKeyInsert(ctx context.Context, key *docket.APIKey) error {
	if key.ID == "" || key.TenantID == "" || len(key.Hash) == 0 {
		return fmt.Errorf("%w: API key needs an id, a tenant and a hash", docket.ErrInvalid)
	}
	err := s.pool.QueryRow(ctx, `
INSERT INTO docket_api_keys (id, tenant_id, hash, name, created_at, expires_at, revoked_at)
VALUES ($1, $2, $3, $4, coalesce($5, clock_timestamp()), $6, $7) RETURNING created_at`,
		key.ID, key.TenantID, key.Hash, key.Name, optTime(key.CreatedAt), optTime(key.ExpiresAt), optTime(key.RevokedAt),
	).Scan(&key.CreatedAt)
	if err != nil {
		return fmt.Errorf("insert API key %q: %w", key.ID, docsError(err))
	}
	return nil
}

// APIKeyGet returns a key by its public id, or ErrNotFound.
func (s *Store) APIKeyGet(ctx context.Context, id string) (*docket.APIKey, error) {
	k, err := scanAPIKey(s.pool.QueryRow(ctx, `SELECT `+apiKeyColumns+` FROM docket_api_keys WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("get API key %q: %w", id, docsError(err))
	}
	return k, nil
}

// APIKeyList returns a tenant's keys, oldest first.
func (s *Store) APIKeyList(ctx context.Context, tenantID string) ([]*docket.APIKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+apiKeyColumns+` FROM docket_api_keys
WHERE tenant_id = $1 ORDER BY created_at, id`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("list API keys: %w", docsError(err))
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*docket.APIKey, error) { return scanAPIKey(r) })
	if err != nil {
		return nil, fmt.Errorf("list API keys: %w", docsError(err))
	}
	return keys, nil
}

// APIKeyRevoke marks a key of the tenant revoked, or ErrNotFound. A key
// revoked before keeps its first revocation time.
func (s *Store) APIKeyRevoke(ctx context.Context, tenantID, id string) error {
	tag, err := s.pool.Exec(ctx, `UPDATE docket_api_keys SET revoked_at = coalesce(revoked_at, clock_timestamp())
WHERE tenant_id = $1 AND id = $2`, tenantID, id)
	if err != nil {
		return fmt.Errorf("revoke API key %q: %w", id, docsError(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("revoke API key %q: %w", id, docket.ErrNotFound)
	}
	return nil
}

func scanAPIKey(row pgx.Row) (*docket.APIKey, error) {
	var k docket.APIKey
	var expires, revoked *time.Time
	if err := row.Scan(&k.ID, &k.TenantID, &k.Hash, &k.Name, &k.CreatedAt, &expires, &revoked); err != nil {
		return nil, err
	}
	if expires != nil {
		k.ExpiresAt = *expires
	}
	if revoked != nil {
		k.RevokedAt = *revoked
	}
	return &k, nil
}

// optTime is t, or NULL for the zero time.
func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
