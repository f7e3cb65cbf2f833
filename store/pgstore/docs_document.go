package pgstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket"
)

// docColumns reads a document of d, with its status derived from its job
// j (LEFT JOIN docket_jobs j ON j.id = d.job_id AND j.tenant_id =
// d.tenant_id): the job's state as docket.StatusOf maps it, or the recorded
// status when the job is gone; and the failed job's error message.
const docColumns = `d.id, d.tenant_id, d.filename, d.content_type, d.size, d.sha256, d.blob_key,
    coalesce(d.job_id, 0), ` + docStatusSQL + `, ` + docErrorSQL + `, d.fields, d.warnings, d.created_at, d.updated_at`

// docErrorSQL is the error of document d with job j: the job's message
// when it failed.
const docErrorSQL = `CASE WHEN j.state = 'failed' THEN j.error_message ELSE '' END`

// docStatusSQL is the derived status of document d with job j.
const docStatusSQL = `coalesce(CASE j.state WHEN 'scheduled' THEN 'pending' WHEN 'running' THEN 'processing'
    WHEN 'waiting' THEN 'processing'
    ELSE j.state END, d.status)`

// docJobJoin joins a document's job, of the same tenant only.
const docJobJoin = ` LEFT JOIN docket_jobs j ON j.id = d.job_id AND j.tenant_id = d.tenant_id`

const docInsertSQL = `INSERT INTO docket_documents
    (id, tenant_id, filename, content_type, size, sha256, blob_key, job_id, status, fields, warnings)
VALUES ($1, $2, $3, $4, $5, $6, $7, nullif($8, 0), $9, $10, coalesce($11, '[]'::jsonb))
RETURNING created_at, updated_at`

const docGetSQL = `SELECT ` + docColumns + ` FROM docket_documents d` + docJobJoin + `
WHERE d.tenant_id = $1 AND d.id = $2`

// docUpdateSQL changes the fields whose parameter is not NULL ($3 says
// whether to change job_id, which may become NULL).
const docUpdateSQL = `WITH d AS (
    UPDATE docket_documents SET
        job_id = CASE WHEN $3 THEN nullif($4::bigint, 0) ELSE job_id END,
        status = coalesce($5, status), fields = coalesce($6, fields), warnings = coalesce($7, warnings),
        updated_at = clock_timestamp()
    WHERE tenant_id = $1 AND id = $2
    RETURNING *
)
SELECT ` + docColumns + ` FROM d` + docJobJoin

const docDeleteSQL = `WITH d AS (
    DELETE FROM docket_documents WHERE tenant_id = $1 AND id = $2 RETURNING *
)
SELECT ` + docColumns + ` FROM d` + docJobJoin

// DocumentInsert stores a new document of the transaction's tenant.
func (t *tenantTx) DocumentInsert(ctx context.Context, doc *docket.Document) error {
	if doc.ID == "" {
		return fmt.Errorf("insert document: %w: id is required", docket.ErrInvalid)
	}
	if doc.Status == "" {
		doc.Status = docket.StatusPending
	}
	if !doc.Status.Valid() {
		return fmt.Errorf("insert document: %w: status %q", docket.ErrInvalid, doc.Status)
	}
	fields, warnings, err := docJSON(doc.Fields, doc.Warnings)
	if err != nil {
		return fmt.Errorf("insert document %s: %w", doc.ID, err)
	}
	err = t.tx.QueryRow(ctx, docInsertSQL, doc.ID, t.tenant, doc.Filename, doc.ContentType, doc.Size,
		doc.SHA256, doc.BlobKey, doc.JobID, string(doc.Status), fields, warnings,
	).Scan(&doc.CreatedAt, &doc.UpdatedAt)
	if err != nil {
		return fmt.Errorf("insert document %s: %w", doc.ID, docsError(err))
	}
	doc.TenantID = t.tenant
	return nil
}

// DocumentGet returns a document with its derived status, or ErrNotFound.
func (t *tenantTx) DocumentGet(ctx context.Context, id string) (*docket.Document, error) {
	doc, err := scanDocument(t.tx.QueryRow(ctx, docGetSQL, t.tenant, id))
	if err != nil {
		return nil, fmt.Errorf("get document %s: %w", id, docsError(err))
	}
	return doc, nil
}

// DocumentUpdate changes a document and returns it, or ErrNotFound.
func (t *tenantTx) DocumentUpdate(ctx context.Context, params *docket.DocumentUpdateParams) (*docket.Document, error) {
	var status *string
	if params.Status != nil {
		if !params.Status.Valid() {
			return nil, fmt.Errorf("update document %s: %w: status %q", params.ID, docket.ErrInvalid, *params.Status)
		}
		s := string(*params.Status)
		status = &s
	}
	var jobID int64
	if params.JobID != nil {
		jobID = *params.JobID
	}
	fields, warnings, err := docJSON(params.Fields, params.Warnings)
	if err != nil {
		return nil, fmt.Errorf("update document %s: %w", params.ID, err)
	}
	doc, err := scanDocument(t.tx.QueryRow(ctx, docUpdateSQL, t.tenant, params.ID,
		params.JobID != nil, jobID, status, fields, warnings))
	if err != nil {
		return nil, fmt.Errorf("update document %s: %w", params.ID, docsError(err))
	}
	return doc, nil
}

// DocumentDelete deletes a document with its chunks (the foreign key
// cascades) and returns it as it was, or ErrNotFound.
func (t *tenantTx) DocumentDelete(ctx context.Context, id string) (*docket.Document, error) {
	doc, err := scanDocument(t.tx.QueryRow(ctx, docDeleteSQL, t.tenant, id))
	if err != nil {
		return nil, fmt.Errorf("delete document %s: %w", id, docsError(err))
	}
	return doc, nil
}

// docJSON encodes fields and warnings as jsonb parameters; nil stays NULL.
func docJSON(fields *docket.Fields, warnings []string) (f, w []byte, err error) {
	if fields != nil {
		if f, err = json.Marshal(fields); err != nil {
			return nil, nil, err
		}
	}
	if warnings != nil {
		if w, err = json.Marshal(warnings); err != nil {
			return nil, nil, err
		}
	}
	return f, w, nil
}

func scanDocument(row pgx.Row) (*docket.Document, error) {
	var d docket.Document
	var status string
	var fields, warnings []byte
	err := row.Scan(&d.ID, &d.TenantID, &d.Filename, &d.ContentType, &d.Size, &d.SHA256, &d.BlobKey,
		&d.JobID, &status, &d.Error, &fields, &warnings, &d.CreatedAt, &d.UpdatedAt)
	if err != nil {
		return nil, err
	}
	d.Status = docket.DocumentStatus(status)
	if fields != nil {
		d.Fields = new(docket.Fields)
		if err := json.Unmarshal(fields, d.Fields); err != nil {
			return nil, fmt.Errorf("document %s fields: %w", d.ID, err)
		}
	}
	if err := json.Unmarshal(warnings, &d.Warnings); err != nil {
		return nil, fmt.Errorf("document %s warnings: %w", d.ID, err)
	}
	return &d, nil
}
