package pgstore

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/docketq/docket"
)

// chunkInsertSQL inserts a document's chunks given as parallel arrays. Not
// COPY: COPY FROM refuses tables with row-level security.
// The tsvector is the words of the normalised text (words, indexText)
// stemmed by the chunk's configuration, then as written, then the lexemes
// of its hyphenated compounds (compounds, space-separated: compoundsOf;
// docket_compounds in repeatable/compounds.sql says why).
const chunkInsertSQL = `INSERT INTO docket_chunks
    (tenant_id, document_id, idx, text, page_start, page_end, vector, model, dimensions, config, tsv)
SELECT $1, $2, c.idx, c.text, c.page_start, c.page_end, c.vector, c.model, c.dimensions, c.config::regconfig,
    to_tsvector(c.config::regconfig, c.words) || to_tsvector('simple', c.words)
        || docket_compounds(c.config::regconfig, coalesce(string_to_array(nullif(c.compounds, ''), ' '), '{}'))
FROM unnest($3::int[], $4::text[], $5::int[], $6::int[], $7::bytea[], $8::text[], $9::int[], $10::text[], $11::text[], $12::text[])
    AS c(idx, text, page_start, page_end, vector, model, dimensions, config, words, compounds)`

// chunkDeleteSQL deletes a document's chunks by the primary key's
// document_id.
const chunkDeleteSQL = `DELETE FROM docket_chunks WHERE tenant_id = $1 AND document_id = $2`

// searchConfigSQL records the text-search configurations of a tenant's
// chunks (docket_search_configs).
const searchConfigSQL = `INSERT INTO docket_search_configs (tenant_id, config)
SELECT DISTINCT $1, c::regconfig FROM unnest($2::text[]) AS c
ON CONFLICT DO NOTHING`

// chunkListSQL returns a document's chunks without vectors, or one row of
// NULLs when it has none, and no row when the document does not exist.
const chunkListSQL = `SELECT c.idx, c.text, c.page_start, c.page_end, c.model, c.dimensions
FROM docket_documents d LEFT JOIN docket_chunks c ON c.document_id = d.id AND c.tenant_id = d.tenant_id AND c.idx >= $3
WHERE d.tenant_id = $1 AND d.id = $2
ORDER BY c.idx LIMIT $4`

// ChunkReplace replaces all chunks of a document; an unknown document is
// ErrNotFound.
func (t *tenantTx) ChunkReplace(ctx context.Context, documentID string, chunks []*docket.Chunk) error {
	return t.chunkWrite(ctx, documentID, chunks, true)
}

// ChunkAppend adds chunks to a document's.
func (t *tenantTx) ChunkAppend(ctx context.Context, documentID string, chunks []*docket.Chunk) error {
	return t.chunkWrite(ctx, documentID, chunks, false)
}

// ChunkDeleteIndexes deletes a document's chunks with an index in
// [from, to), its row locked first as chunkWrite locks it. Indexes beyond
// int32 are clamped: no chunk has one.
func (t *tenantTx) ChunkDeleteIndexes(ctx context.Context, documentID string, from, to int) error {
	if err := t.lockDoc(ctx, documentID); err != nil {
		return fmt.Errorf("delete chunks of %s: %w", documentID, err)
	}
	clamp := func(i int) int64 { return min(max(int64(i), math.MinInt32), math.MaxInt32) }
	_, err := t.tx.Exec(ctx, chunkDeleteSQL+` AND idx >= $3 AND idx < $4`, t.tenant, documentID, clamp(from), clamp(to))
	if err != nil {
		return fmt.Errorf("delete chunks %d-%d of %s: %w", from, to, documentID, docsError(err))
	}
	return nil
}

// lockDoc locks a document's row, as DocumentDelete locks it, so that
// chunks never outlive their document; an unknown one is ErrNotFound.
func (t *tenantTx) lockDoc(ctx context.Context, documentID string) error {
	var found bool
	err := t.tx.QueryRow(ctx, `SELECT true FROM docket_documents WHERE tenant_id = $1 AND id = $2 FOR UPDATE`,
		t.tenant, documentID).Scan(&found)
	return docsError(err)
}

// chunkWrite inserts chunks of a document, after deleting its others when
// replace is set. The document's row is locked first (lockDoc).
func (t *tenantTx) chunkWrite(ctx context.Context, documentID string, chunks []*docket.Chunk, replace bool) error {
	if err := t.lockDoc(ctx, documentID); err != nil {
		return fmt.Errorf("replace chunks of %s: %w", documentID, err)
	}
	if replace {
		if _, err := t.tx.Exec(ctx, chunkDeleteSQL, t.tenant, documentID); err != nil {
			return fmt.Errorf("replace chunks of %s: %w", documentID, docsError(err))
		}
	}
	if len(chunks) == 0 {
		return nil
	}
	n := len(chunks)
	idxs, starts, ends, dims := make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
	texts, models, configs, words := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	compounds := make([]string, n)
	vectors := make([][]byte, n)
	for i, c := range chunks {
		idxs[i], starts[i], ends[i], dims[i] = int32(c.Index), int32(c.PageStart), int32(c.PageEnd), int32(c.Dimensions)
		texts[i], models[i], vectors[i] = c.Text, c.Model, encodeVector(c.Vector)
		configs[i], words[i] = textSearchConfig(c.Language), indexText(c.Text)
		compounds[i] = strings.Join(compoundsOf(words[i]), " ")
		c.TenantID, c.DocumentID = t.tenant, documentID
	}
	if _, err := t.tx.Exec(ctx, searchConfigSQL, t.tenant, configs); err != nil {
		return fmt.Errorf("replace chunks of %s: %w", documentID, docsError(err))
	}
	_, err := t.tx.Exec(ctx, chunkInsertSQL, t.tenant, documentID, idxs, texts, starts, ends, vectors, models, dims, configs, words,
		compounds)
	if err != nil {
		return fmt.Errorf("replace chunks of %s: %w", documentID, docsError(err))
	}
	return nil
}

// ChunkList returns a page of a document's chunks in order, without
// vectors.
func (t *tenantTx) ChunkList(ctx context.Context, p *docket.ChunkListParams) ([]*docket.Chunk, error) {
	documentID := p.DocumentID
	var limit *int // NULL: no limit
	if p.Limit > 0 {
		limit = &p.Limit
	}
	rows, err := t.tx.Query(ctx, chunkListSQL, t.tenant, documentID, p.From, limit)
	if err != nil {
		return nil, fmt.Errorf("list chunks of %s: %w", documentID, docsError(err))
	}
	defer rows.Close()
	var chunks []*docket.Chunk
	found := false
	for rows.Next() {
		found = true
		var idx, start, end, dims *int32
		var text, model *string
		if err := rows.Scan(&idx, &text, &start, &end, &model, &dims); err != nil {
			return nil, fmt.Errorf("list chunks of %s: %w", documentID, err)
		}
		if idx == nil { // the document has no chunks
			continue
		}
		chunks = append(chunks, &docket.Chunk{DocumentID: documentID, TenantID: t.tenant, Index: int(*idx),
			Text: *text, PageStart: int(*start), PageEnd: int(*end), Model: *model, Dimensions: int(*dims)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list chunks of %s: %w", documentID, docsError(err))
	}
	if !found {
		return nil, fmt.Errorf("list chunks of %s: %w", documentID, docket.ErrNotFound)
	}
	return chunks, nil
}

// encodeVector is v as stored (docket.EncodeVector).
func encodeVector(v []float32) []byte { return docket.EncodeVector(v) }

// decodeVector reverses encodeVector.
func decodeVector(b []byte) ([]float32, error) { return docket.DecodeVector(b) }
