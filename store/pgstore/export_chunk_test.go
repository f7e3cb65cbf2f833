package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// SQL of the chunk and search statements, for EXPLAIN tests.
var (
	ChunkDeleteSQL = chunkDeleteSQL
	ChunkListSQL   = chunkListSQL
	ChunkSearchSQL = chunkSearchSQL
	SearchQuerySQL = searchQuerySQL
	ScopeSQL       = scopeSQL
)

// ScopedRead is scopedRead, for tests of its scope.
func (s *Store) ScopedRead(ctx context.Context, tenantID, sql string, args []any, scan func(pgx.Rows) error) error {
	return s.scopedRead(ctx, tenantID, sql, args, scan)
}
