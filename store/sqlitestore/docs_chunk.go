package sqlitestore

import (
	"context"
	"fmt"

	"github.com/docketq/docket"
)

const (
	chunkDeleteSQL      = `DELETE FROM docket_chunks WHERE tenant_id = ? AND document_id = ?`
	chunkDeleteIndexSQL = chunkDeleteSQL + ` AND idx >= ? AND idx < ?`
	chunkInsertSQL      = `INSERT INTO docket_chunks (document_id, idx, tenant_id, text, page_start, page_end,
	model, dimensions, vector, compounds) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	chunkListSQL = `SELECT document_id, tenant_id, idx, text, page_start, page_end, model, dimensions
FROM docket_chunks WHERE tenant_id = ? AND document_id = ? AND idx >= ? ORDER BY idx LIMIT ?`
	docExistsSQL = `SELECT count(*) FROM docket_documents WHERE tenant_id = ? AND id = ?`
)

// ChunkReplace replaces a document's chunks. A chunk's Dimensions of 0 is
// set to the length of its vector; another length is ErrInvalid. Each
// chunk's hyphenated compounds are stored with it for the full-text index
// (chunkCompounds).
func (t *tenantTx) ChunkReplace(ctx context.Context, documentID string, chunks []*docket.Chunk) error {
	return t.chunkWrite(ctx, documentID, chunks, true)
}

// ChunkAppend adds chunks to a document's.
func (t *tenantTx) ChunkAppend(ctx context.Context, documentID string, chunks []*docket.Chunk) error {
	return t.chunkWrite(ctx, documentID, chunks, false)
}

// ChunkDeleteIndexes deletes a document's chunks with an index in
// [from, to).
func (t *tenantTx) ChunkDeleteIndexes(ctx context.Context, documentID string, from, to int) error {
	if err := t.writable("delete chunks"); err != nil {
		return err
	}
	if err := t.docExists(ctx, documentID); err != nil {
		return fmt.Errorf("delete chunks: %w", err)
	}
	if _, err := t.tx.ExecContext(ctx, chunkDeleteIndexSQL, t.tenant, documentID, from, to); err != nil {
		return fmt.Errorf("delete chunks %d-%d of %q: %w", from, to, documentID, docsError(err))
	}
	return nil
}

// chunkWrite inserts chunks of a document, after deleting its others when
// replace is set.
func (t *tenantTx) chunkWrite(ctx context.Context, documentID string, chunks []*docket.Chunk, replace bool) error {
	if err := t.writable("write chunks"); err != nil {
		return err
	}
	if err := t.docExists(ctx, documentID); err != nil {
		return fmt.Errorf("write chunks: %w", err)
	}
	if replace {
		if _, err := t.tx.ExecContext(ctx, chunkDeleteSQL, t.tenant, documentID); err != nil {
			return fmt.Errorf("replace chunks of %q: %w", documentID, docsError(err))
		}
	}
	if len(chunks) == 0 {
		return nil
	}
	stmt, err := t.tx.PrepareContext(ctx, chunkInsertSQL)
	if err != nil {
		return fmt.Errorf("replace chunks of %q: %w", documentID, docsError(err))
	}
	defer stmt.Close()
	for _, c := range chunks {
		c.TenantID, c.DocumentID = t.tenant, documentID
		if c.Dimensions == 0 {
			c.Dimensions = len(c.Vector)
		}
		if c.Vector != nil && len(c.Vector) != c.Dimensions {
			return fmt.Errorf("replace chunks of %q: %w: chunk %d has %d dimensions, vector %d",
				documentID, docket.ErrInvalid, c.Index, c.Dimensions, len(c.Vector))
		}
		_, err := stmt.ExecContext(ctx, documentID, c.Index, t.tenant, c.Text, c.PageStart, c.PageEnd,
			c.Model, c.Dimensions, encodeVector(c.Vector), chunkCompounds(c.Text))
		if err != nil {
			return fmt.Errorf("write chunks of %q: chunk %d: %w", documentID, c.Index, docsError(err))
		}
	}
	return nil
}

// docExists returns ErrNotFound unless the tenant has the document.
func (t *tenantTx) docExists(ctx context.Context, id string) error {
	var n int
	if err := t.tx.QueryRowContext(ctx, docExistsSQL, t.tenant, id).Scan(&n); err != nil {
		return docsError(err)
	}
	if n == 0 {
		return notFound("document", id)
	}
	return nil
}

// ChunkList returns a page of a document's chunks in order, without
// vectors.
func (t *tenantTx) ChunkList(ctx context.Context, p *docket.ChunkListParams) ([]*docket.Chunk, error) {
	documentID := p.DocumentID
	if err := t.docExists(ctx, documentID); err != nil {
		return nil, fmt.Errorf("list chunks: %w", err)
	}
	limit := p.Limit
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := t.tx.QueryContext(ctx, chunkListSQL, t.tenant, documentID, p.From, limit)
	if err != nil {
		return nil, fmt.Errorf("list chunks of %q: %w", documentID, docsError(err))
	}
	defer rows.Close()
	out := []*docket.Chunk{}
	for rows.Next() {
		var c docket.Chunk
		err := rows.Scan(&c.DocumentID, &c.TenantID, &c.Index, &c.Text, &c.PageStart, &c.PageEnd, &c.Model, &c.Dimensions)
		if err != nil {
			return nil, fmt.Errorf("list chunks of %q: %w", documentID, docsError(err))
		}
		out = append(out, &c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list chunks of %q: %w", documentID, docsError(err))
	}
	return out, nil
}

// encodeVector stores v as docket.EncodeVector does; nil is NULL.
func encodeVector(v []float32) any {
	if v == nil {
		return nil
	}
	return docket.EncodeVector(v)
}

func decodeVector(b []byte) ([]float32, error) { return docket.DecodeVector(b) }
