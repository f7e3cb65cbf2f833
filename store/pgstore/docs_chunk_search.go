package pgstore

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5"
	"golang.org/x/text/unicode/norm"

	"github.com/docketq/docket"
)

// searchQuerySQL builds the tsquery of a search: each phrase ($2,
// normalised by indexText) becomes a phrase query under every
// configuration the tenant's chunks were indexed with and 'simple', ORed,
// so that a chunk matches by the stems of its own language or by the words
// as written; a phrase that is one hyphenated compound (its entry of $4
// not empty) is instead that compound's lexeme under each configuration
// (docket_compound), which every chunk holding it has (chunkInsertSQL).
// The phrases are then ANDed, or ORed ($3). NULL when no phrase has a
// word.
const searchQuerySQL = `WITH configs AS (
    SELECT config FROM docket_search_configs WHERE tenant_id = $1
    UNION SELECT 'simple'::regconfig
), alternatives AS (
    SELECT string_agg(DISTINCT nullif(CASE WHEN p.compound <> '' THEN quote_literal(docket_compound(c.config, p.compound))
        ELSE phraseto_tsquery(c.config, p.phrase)::text END, ''), ' | ') AS alt
    FROM unnest($2::text[], $4::text[]) AS p(phrase, compound) CROSS JOIN configs c
    GROUP BY p.phrase
)
SELECT string_agg('(' || alt || ')', CASE WHEN $3 THEN ' | ' ELSE ' & ' END)
FROM alternatives WHERE alt IS NOT NULL`

// chunkSearchSQL ranks the tenant's chunks that match the query (built by
// searchQuerySQL from $1-$4, in the same statement: a round trip less)
// with the GIN index on their tsvector, at most $9 of them: only those
// are ranked (ts_rank, normalised by the log of the chunk's length), and
// only the best $6 read whole. The statement is in docket_chunk_search
// (repeatable/chunk_search.sql), which says why, and runs with the small
// work_mem and no parallel workers of its SET clauses
// (repeatable/chunk_search.sql: no synchronized scans either); a
// NULL query matches nothing.
const chunkSearchSQL = `SELECT document_id, idx, text, page_start, page_end, model, dimensions, vector, filename, rank
FROM docket_chunk_search((` + searchQuerySQL + `)::tsquery, $5, $6, $7, $8, $9)`

// ChunkSearch returns the tenant's chunks that the full-text index
// matches, best first.
func (t *tenantTx) ChunkSearch(ctx context.Context, p *docket.ChunkSearchParams) ([]*docket.SearchHit, error) {
	return searchChunks(t.tenant, p, func(args []any) ([]*docket.SearchHit, error) {
		rows, err := t.tx.Query(ctx, chunkSearchSQL, args...)
		if err != nil {
			return nil, fmt.Errorf("search chunks: %w", docsError(err))
		}
		return scanHits(rows, t.tenant)
	})
}

// searchChunks runs the searches of a ChunkSearch of tenant's chunks
// through run, which runs chunkSearchSQL with the arguments it is given:
// phrases that are one compound as that compound's lexeme, and, when that
// finds nothing, as phrases of their words.
func searchChunks(tenant string, p *docket.ChunkSearchParams, run func(args []any) ([]*docket.SearchHit, error)) ([]*docket.SearchHit, error) {
	phrases := searchable(p.Phrases)
	if len(phrases) == 0 || p.Limit < 1 {
		return nil, nil
	}
	compounds := make([]string, len(phrases))
	exact := false
	for i, ph := range phrases {
		if c := compound(ph); c != "" {
			compounds[i], exact = c, true
		}
	}
	hits, err := run(searchArgs(tenant, p, phrases, compounds))
	if err != nil || len(hits) > 0 || !exact {
		return hits, err
	}
	// No chunk holds a compound as one word: look for its words as a
	// phrase (written apart, or stored before their compounds were
	// indexed).
	return run(searchArgs(tenant, p, phrases, make([]string, len(phrases))))
}

// searchArgs are chunkSearchSQL's arguments for one search: phrases as
// phrase queries, those with a compound (same index, not empty) as that
// compound's lexeme.
func searchArgs(tenant string, p *docket.ChunkSearchParams, phrases, compounds []string) []any {
	var ranked *int // NULL: all
	if p.Ranked > 0 {
		ranked = &p.Ranked
	}
	return []any{tenant, phrases, p.Any, compounds, p.DocumentID, p.Limit, p.Model, p.Dimensions, ranked}
}

// scanHits reads and closes the rows of chunkSearchSQL.
func scanHits(rows pgx.Rows, tenant string) ([]*docket.SearchHit, error) {
	defer rows.Close()
	var hits []*docket.SearchHit
	for rows.Next() {
		c := &docket.Chunk{TenantID: tenant}
		h := &docket.SearchHit{Chunk: c}
		var vector []byte
		var rank float32
		if err := rows.Scan(&c.DocumentID, &c.Index, &c.Text, &c.PageStart, &c.PageEnd, &c.Model, &c.Dimensions,
			&vector, &h.Filename, &rank); err != nil {
			return nil, fmt.Errorf("search chunks: %w", err)
		}
		var err error
		if c.Vector, err = decodeVector(vector); err != nil {
			return nil, fmt.Errorf("search chunks: chunk %d of %s: %w", c.Index, c.DocumentID, err)
		}
		h.Rank = float64(rank)
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search chunks: %w", docsError(err))
	}
	return hits, nil
}

// searchable returns the phrases with a letter or digit, normalised as
// the chunks' text is (indexText).
func searchable(phrases []string) []string {
	var out []string
	for _, p := range phrases {
		if p = indexText(p); strings.TrimSpace(p) != "" {
			out = append(out, p)
		}
	}
	return out
}

// maxCompound caps a compound's length in bytes: longer ones are not
// indexed whole (a tsvector's lexeme and a GIN key have limits).
const maxCompound = 255

// compoundsOf returns the distinct hyphenated compounds of text normalised
// by indexText ("0-dimensionale"), at most maxCompound bytes each.
func compoundsOf(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.Fields(text) {
		if strings.Contains(w, "-") && len(w) <= maxCompound && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// compound returns the phrase (normalised by indexText) when it is one
// hyphenated compound that compoundsOf indexes, else "".
func compound(phrase string) string {
	if c := compoundsOf(phrase); len(c) == 1 && c[0] == strings.TrimSpace(phrase) {
		return c[0]
	}
	return ""
}

// indexText is text as the full-text index reads it: NFKC (ligatures,
// superscripts, full-width forms to their plain letters), lower case, and
// every character other than letters, digits, combining marks and hyphens
// between them replaced by a space. PostgreSQL's parser then splits and
// folds words alike whatever the database's locale (in the C locale it
// takes every non-ASCII character for a letter: „Kruskal“ was one word).
func indexText(text string) string {
	text = strings.ToLower(norm.NFKC.String(text))
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) }
	rs := []rune(text)
	for i, r := range rs {
		if word(r) {
			continue
		}
		if r == '-' && i > 0 && i+1 < len(rs) && word(rs[i-1]) && word(rs[i+1]) {
			continue
		}
		rs[i] = ' '
	}
	return string(rs)
}

// textSearchConfigs are PostgreSQL's built-in text-search configurations
// (PostgreSQL 12 and later) by ISO 639-1 code.
var textSearchConfigs = map[string]string{
	"ar": "arabic", "da": "danish", "de": "german", "el": "greek", "en": "english", "es": "spanish",
	"fi": "finnish", "fr": "french", "ga": "irish", "hu": "hungarian", "id": "indonesian", "it": "italian",
	"lt": "lithuanian", "nb": "norwegian", "ne": "nepali", "nl": "dutch", "no": "norwegian", "pt": "portuguese",
	"ro": "romanian", "ru": "russian", "sv": "swedish", "ta": "tamil", "tr": "turkish",
}

// textSearchConfig is the configuration that indexes text of language (an
// ISO 639-1 code): its own where PostgreSQL has one, else 'simple' (words
// lower-cased, not stemmed, no stop words).
func textSearchConfig(language string) string {
	if c, ok := textSearchConfigs[strings.ToLower(language)]; ok {
		return c
	}
	return "simple"
}
