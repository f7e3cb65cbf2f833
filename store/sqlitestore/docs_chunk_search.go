package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"unicode"

	"github.com/docketq/docket"
)

// chunkSearchSQL ranks the FTS5 matches of the tenant's chunks by BM25
// (FTS5's rank: lower is better). The query ?3 is written in the tenant's
// words (ftsMatch), so the index matches the tenant's chunks only (and,
// rarely, those of a tenant with the same prefix); the join keeps the
// tenant's own, at most ?7 of them (-1: all), newest
// (highest rowid) first, looked up in the covering index
// docket_chunks_match rather than in the table. Only the best ?6 are read whole (text, vector,
// filename): the sort holds a match's id and rank, not its row.
const chunkSearchSQL = `SELECT c.document_id, c.idx, c.text, c.page_start, c.page_end, c.model, c.dimensions,
	CASE WHEN c.model = ?1 AND c.dimensions = ?2 THEN c.vector END, d.filename, top.rank
FROM (
	SELECT id, rank, document_id, idx FROM (
		SELECT f.rowid AS id, f.rank AS rank, m.document_id AS document_id, m.idx AS idx
		FROM docket_chunks_fts f JOIN docket_chunks m INDEXED BY docket_chunks_match ON m.id = f.rowid
		WHERE docket_chunks_fts MATCH ?3 AND m.tenant_id = ?4 AND (?5 = '' OR m.document_id = ?5)
		ORDER BY f.rowid DESC
		LIMIT ?7
	)
	ORDER BY rank, document_id, idx
	LIMIT ?6
) top
JOIN docket_chunks c ON c.id = top.id
JOIN docket_documents d ON d.id = c.document_id AND d.tenant_id = c.tenant_id
ORDER BY top.rank, top.document_id, top.idx`

// ChunkSearch returns the tenant's chunks that the full-text index
// matches, best first. A phrase that is one hyphenated compound is looked
// up as the compound's token (compoundPhrase); when nothing matches so, its
// words are searched as a phrase (written apart, or in a chunk stored
// without its compounds).
func (t *tenantTx) ChunkSearch(ctx context.Context, p *docket.ChunkSearchParams) ([]*docket.SearchHit, error) {
	return searchTenant(ctx, t.tx, t.tenant, p)
}

// ChunkSearch is what ReadTenant(tenantID) and its transaction's
// ChunkSearch(p) do, without the transaction: each search is one
// statement on a reader connection, its own read transaction (no BEGIN
// and COMMIT around it).
func (s *Store) ChunkSearch(ctx context.Context, tenantID string, p *docket.ChunkSearchParams) ([]*docket.SearchHit, error) {
	if tenantID == "" {
		return nil, fmt.Errorf("%w: tenant is required", docket.ErrInvalid)
	}
	return searchTenant(ctx, s.reader, tenantID, p)
}

// querier runs a statement: a *sql.Tx or a *sql.DB.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// searchTenant runs the searches of a ChunkSearch of tenant's chunks on q.
func searchTenant(ctx context.Context, q querier, tenant string, p *docket.ChunkSearchParams) ([]*docket.SearchHit, error) {
	match, compounds := ftsMatch(tenant, p.Phrases, p.Any, true)
	if match == "" || p.Limit < 1 {
		return nil, nil
	}
	hits, err := chunkSearch(ctx, q, tenant, p, match)
	if err != nil || len(hits) > 0 || !compounds {
		return hits, err
	}
	match, _ = ftsMatch(tenant, p.Phrases, p.Any, false)
	return chunkSearch(ctx, q, tenant, p, match)
}

// chunkSearch runs one FTS5 query of ChunkSearch.
func chunkSearch(ctx context.Context, q querier, tenant string, p *docket.ChunkSearchParams, match string) ([]*docket.SearchHit, error) {
	ranked := p.Ranked
	if ranked <= 0 {
		ranked = -1 // SQLite: no limit
	}
	rows, err := q.QueryContext(ctx, chunkSearchSQL, p.Model, p.Dimensions, match, tenant, p.DocumentID, p.Limit, ranked)
	if err != nil {
		return nil, fmt.Errorf("search chunks: %w", docsError(err))
	}
	defer rows.Close()
	var hits []*docket.SearchHit
	for rows.Next() {
		c := &docket.Chunk{TenantID: tenant}
		h := &docket.SearchHit{Chunk: c}
		var vec []byte
		if err := rows.Scan(&c.DocumentID, &c.Index, &c.Text, &c.PageStart, &c.PageEnd, &c.Model, &c.Dimensions,
			&vec, &h.Filename, &h.Rank); err != nil {
			return nil, fmt.Errorf("search chunks: %w", docsError(err))
		}
		if c.Vector, err = decodeVector(vec); err != nil {
			return nil, fmt.Errorf("search chunks: chunk %d of %s: %w", c.Index, c.DocumentID, err)
		}
		h.Rank = -h.Rank // BM25 as FTS5 ranks it is negative, best lowest
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search chunks: %w", docsError(err))
	}
	return hits, nil
}

// ftsMatch is an FTS5 query of the tenant's chunks for phrases: each a
// quoted string of the tenant's words (tenantTerms; FTS5 splits it with the
// table's tokenizer into a phrase), joined by AND or OR.
// With compounds, a phrase that is one hyphenated compound is its token in
// the compounds column instead, and hasCompound says whether one was.
// Phrases without a letter or digit are left out; none left is "".
func ftsMatch(tenant string, phrases []string, anyOf, compounds bool) (match string, hasCompound bool) {
	var quoted []string
	for _, p := range phrases {
		if strings.IndexFunc(p, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
			continue
		}
		if c := compoundPhrase(p); compounds && c != "" {
			quoted = append(quoted, `compounds : "`+strings.ReplaceAll(tenantTerms(tenant, c), `"`, `""`)+`"`)
			hasCompound = true
			continue
		}
		quoted = append(quoted, `"`+strings.ReplaceAll(tenantTerms(tenant, p), `"`, `""`)+`"`)
	}
	op := " AND "
	if anyOf {
		op = " OR "
	}
	return strings.Join(quoted, op), hasCompound
}
