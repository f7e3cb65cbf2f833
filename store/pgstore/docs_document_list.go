package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket"
)

// docListSQL lists a tenant's documents newest first: $2 the derived
// status or ” for all, $3 the limit; cursor is "" or a condition on $4,
// $5 (the cursor's created_at and id). The index (tenant_id, created_at
// DESC, id DESC) serves order and cursor as one range scan.
func docListSQL(cursor string) string {
	return `SELECT ` + docColumns + ` FROM docket_documents d` + docJobJoin + `
WHERE d.tenant_id = $1 AND ($2 = '' OR ` + docStatusSQL + ` = $2)` + cursor + `
ORDER BY d.created_at DESC, d.id DESC
LIMIT $3`
}

// docCursorSQL is the cursor condition of docListSQL.
const docCursorSQL = `
  AND (d.created_at, d.id) < ($4, $5)`

// Limits of DocumentList.
const (
	docListDefault = 50
	docListMax     = 1000
)

// DocumentList returns documents, newest first. An unknown cursor is
// ErrNotFound.
func (t *tenantTx) DocumentList(ctx context.Context, params *docket.DocumentListParams) ([]*docket.Document, error) {
	if params.Status != "" && !params.Status.Valid() {
		return nil, fmt.Errorf("list documents: %w: status %q", docket.ErrInvalid, params.Status)
	}
	limit := params.Limit
	switch {
	case limit < 0:
		return nil, fmt.Errorf("list documents: %w: limit %d is negative", docket.ErrInvalid, limit)
	case limit == 0:
		limit = docListDefault
	case limit > docListMax:
		limit = docListMax
	}
	sql, args := docListSQL(""), []any{t.tenant, string(params.Status), limit}
	if params.Before != "" {
		var at time.Time
		err := t.tx.QueryRow(ctx, `SELECT created_at FROM docket_documents WHERE tenant_id = $1 AND id = $2`,
			t.tenant, params.Before).Scan(&at)
		if err != nil {
			return nil, fmt.Errorf("list documents: cursor %q: %w", params.Before, docsError(err))
		}
		sql, args = docListSQL(docCursorSQL), append(args, at, params.Before)
	}
	rows, err := t.tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("list documents: %w", docsError(err))
	}
	docs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*docket.Document, error) { return scanDocument(r) })
	if err != nil {
		return nil, fmt.Errorf("list documents: %w", docsError(err))
	}
	return docs, nil
}
