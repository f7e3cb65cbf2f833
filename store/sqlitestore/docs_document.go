package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/docketq/docket"
)

// docStatus derives a document's status from its job's state (as
// docket.StatusOf does), or is the recorded status when the job row is gone.
// The join names the tenant too: a job of another tenant is no job.
const docStatus = `CASE WHEN j.state IS NULL THEN d.status
	WHEN j.state IN ('scheduled', 'pending') THEN 'pending'
	WHEN j.state IN ('running', 'waiting') THEN 'processing'
	ELSE j.state END`

// docError is the error of a document: its job's message when it failed.
const docError = `CASE WHEN j.state = 'failed' THEN j.error_message ELSE '' END`

const (
	docSelectSQL = `SELECT d.id, d.tenant_id, d.filename, d.content_type, d.size, d.sha256, d.blob_key, d.job_id,
	` + docStatus + `, ` + docError + `, d.fields, d.warnings, d.created_at, d.updated_at
FROM docket_documents d LEFT JOIN docket_jobs j ON j.id = d.job_id AND j.tenant_id = d.tenant_id`
	docGetSQL    = docSelectSQL + ` WHERE d.tenant_id = ? AND d.id = ?`
	docInsertSQL = `INSERT INTO docket_documents (id, tenant_id, filename, content_type, size, sha256, blob_key,
	job_id, status, fields, warnings, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	docDeleteSQL = `DELETE FROM docket_documents WHERE tenant_id = ? AND id = ?`
	docCursorSQL = `SELECT created_at FROM docket_documents WHERE tenant_id = ? AND id = ?`
)

// DocumentInsert stores a new document of the tenant. An empty Status is
// recorded as pending.
func (t *tenantTx) DocumentInsert(ctx context.Context, doc *docket.Document) error {
	if err := t.writable("insert document"); err != nil {
		return err
	}
	if doc.ID == "" {
		return fmt.Errorf("insert document: %w: id is required", docket.ErrInvalid)
	}
	if doc.Status == "" {
		doc.Status = docket.StatusPending
	}
	if !doc.Status.Valid() {
		return fmt.Errorf("insert document %q: %w: status %q", doc.ID, docket.ErrInvalid, doc.Status)
	}
	fields, warnings, err := docJSON(doc.Fields, doc.Warnings)
	if err != nil {
		return fmt.Errorf("insert document %q: %w", doc.ID, err)
	}
	now := t.s.clock()
	_, err = t.tx.ExecContext(ctx, docInsertSQL, doc.ID, t.tenant, doc.Filename, doc.ContentType, doc.Size,
		doc.SHA256, doc.BlobKey, doc.JobID, string(doc.Status), fields, warnings, now, now)
	if err != nil {
		return fmt.Errorf("insert document %q: %w", doc.ID, docsError(err))
	}
	doc.TenantID = t.tenant
	doc.CreatedAt, doc.UpdatedAt = fromMicros(now), fromMicros(now)
	var status string
	err = t.tx.QueryRowContext(ctx, `SELECT `+docStatus+` FROM docket_documents d
LEFT JOIN docket_jobs j ON j.id = d.job_id AND j.tenant_id = d.tenant_id
WHERE d.tenant_id = ? AND d.id = ?`, t.tenant, doc.ID).Scan(&status)
	if err != nil {
		return fmt.Errorf("insert document %q: %w", doc.ID, docsError(err))
	}
	doc.Status = docket.DocumentStatus(status)
	return nil
}

// DocumentGet returns a document of the tenant, or ErrNotFound.
func (t *tenantTx) DocumentGet(ctx context.Context, id string) (*docket.Document, error) {
	doc, err := scanDocument(t.tx.QueryRowContext(ctx, docGetSQL, t.tenant, id))
	if err != nil {
		return nil, fmt.Errorf("get document %q: %w", id, docsError(err))
	}
	return doc, nil
}

// DocumentList returns the tenant's documents, newest first, filtered by
// derived status, after the cursor document.
func (t *tenantTx) DocumentList(ctx context.Context, p *docket.DocumentListParams) ([]*docket.Document, error) {
	query, args, err := t.docListQuery(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("list documents: %w", err)
	}
	rows, err := t.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list documents: %w", docsError(err))
	}
	defer rows.Close()
	out := []*docket.Document{}
	for rows.Next() {
		doc, err := scanDocument(rows)
		if err != nil {
			return nil, fmt.Errorf("list documents: %w", docsError(err))
		}
		out = append(out, doc)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list documents: %w", docsError(err))
	}
	return out, nil
}

func (t *tenantTx) docListQuery(ctx context.Context, p *docket.DocumentListParams) (string, []any, error) {
	var b strings.Builder
	b.WriteString(docSelectSQL + ` WHERE d.tenant_id = ?`)
	args := []any{t.tenant}
	if p.Status != "" {
		if !p.Status.Valid() {
			return "", nil, fmt.Errorf("%w: status %q", docket.ErrInvalid, p.Status)
		}
		b.WriteString(` AND (` + docStatus + `) = ?`)
		args = append(args, string(p.Status))
	}
	if p.Before != "" {
		var created int64
		err := t.tx.QueryRowContext(ctx, docCursorSQL, t.tenant, p.Before).Scan(&created)
		if err != nil {
			return "", nil, fmt.Errorf("cursor %q: %w", p.Before, docsError(err))
		}
		b.WriteString(` AND (d.created_at, d.id) < (?, ?)`)
		args = append(args, created, p.Before)
	}
	limit := p.Limit
	switch {
	case limit < 0:
		return "", nil, fmt.Errorf("%w: limit %d is negative", docket.ErrInvalid, limit)
	case limit == 0:
		limit = 50
	case limit > 1000:
		limit = 1000
	}
	b.WriteString(` ORDER BY d.created_at DESC, d.id DESC LIMIT ?`)
	return b.String(), append(args, limit), nil
}

// DocumentDelete deletes a document of the tenant (its chunks go with it,
// ON DELETE CASCADE) and returns it as it was.
func (t *tenantTx) DocumentDelete(ctx context.Context, id string) (*docket.Document, error) {
	if err := t.writable("delete document"); err != nil {
		return nil, err
	}
	doc, err := t.DocumentGet(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("delete document: %w", err)
	}
	if _, err := t.tx.ExecContext(ctx, docDeleteSQL, t.tenant, id); err != nil {
		return nil, fmt.Errorf("delete document %q: %w", id, docsError(err))
	}
	return doc, nil
}

func scanDocument(s scanner) (*docket.Document, error) {
	var (
		doc              docket.Document
		status           string
		fields, warnings sql.NullString
		created, updated int64
	)
	err := s.Scan(&doc.ID, &doc.TenantID, &doc.Filename, &doc.ContentType, &doc.Size, &doc.SHA256, &doc.BlobKey,
		&doc.JobID, &status, &doc.Error, &fields, &warnings, &created, &updated)
	if err != nil {
		return nil, err
	}
	doc.Status = docket.DocumentStatus(status)
	doc.CreatedAt, doc.UpdatedAt = fromMicros(created), fromMicros(updated)
	if fields.Valid {
		doc.Fields = new(docket.Fields)
		if err := json.Unmarshal([]byte(fields.String), doc.Fields); err != nil {
			return nil, fmt.Errorf("document %s fields: %w", doc.ID, err)
		}
	}
	if warnings.Valid {
		if err := json.Unmarshal([]byte(warnings.String), &doc.Warnings); err != nil {
			return nil, fmt.Errorf("document %s warnings: %w", doc.ID, err)
		}
		if doc.Warnings == nil {
			doc.Warnings = []string{}
		}
	}
	return &doc, nil
}

// docJSON encodes fields and warnings as JSON text; nil is NULL.
func docJSON(fields *docket.Fields, warnings []string) (f, w sql.NullString, err error) {
	if fields != nil {
		b, err := json.Marshal(fields)
		if err != nil {
			return f, w, fmt.Errorf("encode fields: %w", err)
		}
		f = sql.NullString{String: string(b), Valid: true}
	}
	if warnings != nil {
		b, err := json.Marshal(warnings)
		if err != nil {
			return f, w, fmt.Errorf("encode warnings: %w", err)
		}
		w = sql.NullString{String: string(b), Valid: true}
	}
	return f, w, nil
}
