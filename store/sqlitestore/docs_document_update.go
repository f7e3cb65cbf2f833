package sqlitestore

import (
	"context"
	"fmt"
	"strings"

	"github.com/docketq/docket"
)

// DocumentUpdate changes the given fields of a document of the tenant and
// returns it, or ErrNotFound.
func (t *tenantTx) DocumentUpdate(ctx context.Context, p *docket.DocumentUpdateParams) (*docket.Document, error) {
	if err := t.writable("update document"); err != nil {
		return nil, err
	}
	sets, args, err := docUpdateSets(p)
	if err != nil {
		return nil, fmt.Errorf("update document %q: %w", p.ID, err)
	}
	sets = append(sets, "updated_at = ?")
	args = append(args, t.s.clock(), t.tenant, p.ID)
	query := `UPDATE docket_documents SET ` + strings.Join(sets, ", ") + ` WHERE tenant_id = ? AND id = ?`
	res, err := t.tx.ExecContext(ctx, query, args...)
	if err == nil {
		err = affected(res, "document", p.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("update document: %w", docsError(err))
	}
	return t.DocumentGet(ctx, p.ID)
}

// docUpdateSets returns the SET terms and their arguments for the fields p
// changes.
func docUpdateSets(p *docket.DocumentUpdateParams) ([]string, []any, error) {
	var (
		sets []string
		args []any
	)
	if p.JobID != nil {
		sets, args = append(sets, "job_id = ?"), append(args, *p.JobID)
	}
	if p.Status != nil {
		if !p.Status.Valid() {
			return nil, nil, fmt.Errorf("%w: status %q", docket.ErrInvalid, *p.Status)
		}
		sets, args = append(sets, "status = ?"), append(args, string(*p.Status))
	}
	fields, warnings, err := docJSON(p.Fields, p.Warnings)
	if err != nil {
		return nil, nil, err
	}
	if fields.Valid {
		sets, args = append(sets, "fields = ?"), append(args, fields)
	}
	if warnings.Valid {
		sets, args = append(sets, "warnings = ?"), append(args, warnings)
	}
	return sets, args, nil
}
