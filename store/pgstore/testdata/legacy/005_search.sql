-- Search: full-text search of the chunks.
--
-- Each chunk keeps the text-search configuration of its document's
-- language (english, german, ...; 'simple' when the language is unknown or
-- has none) and its tsvector, indexed with GIN: the words stemmed by that
-- configuration and, after them, every word as written (lower-cased, by
-- 'simple'), so that a function word or an exact form is found too. The
-- driver computes it on insert from the text normalised in Go (NFKC, lower
-- case, every character but letters, digits and inner hyphens a space), so
-- that words are split and folded alike whatever the database's locale. The tenant's index (tenant_id, model, dimensions) goes
-- (a search no longer scans a tenant's vectors) for one that leads with the
-- tenant as the policy does and finds a document's chunks in order.

ALTER TABLE docket_chunks ADD COLUMN config regconfig NOT NULL DEFAULT 'simple';
ALTER TABLE docket_chunks ADD COLUMN tsv tsvector NOT NULL DEFAULT ''::tsvector;
UPDATE docket_chunks SET tsv = to_tsvector('simple', lower(text));
-- Without fastupdate: a search would read the whole pending list of
-- entries not yet merged (up to 4 MB after a burst of uploads) every time.
CREATE INDEX docket_chunks_tsv ON docket_chunks USING gin (tsv) WITH (fastupdate = off);
DROP INDEX docket_chunks_tenant;
CREATE INDEX docket_chunks_tenant ON docket_chunks (tenant_id, document_id, idx);

-- The configurations a tenant's chunks were indexed with: a search builds
-- its query with each of them, as a chunk's words were stemmed by its own.
-- Rows are added with chunks and never removed (a configuration too many
-- only widens the query).
CREATE TABLE docket_search_configs (
    tenant_id text NOT NULL,
    config    regconfig NOT NULL,
    PRIMARY KEY (tenant_id, config)
);
INSERT INTO docket_search_configs (tenant_id, config)
SELECT DISTINCT tenant_id, 'simple'::regconfig FROM docket_chunks;

ALTER TABLE docket_search_configs ENABLE ROW LEVEL SECURITY;
ALTER TABLE docket_search_configs FORCE ROW LEVEL SECURITY;
CREATE POLICY docket_tenant ON docket_search_configs TO docket_app
    USING (tenant_id = current_setting('app.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
DO $$
BEGIN
    EXECUTE format('CREATE POLICY docket_owner ON docket_search_configs TO %I USING (true) WITH CHECK (true)', current_user);
END
$$;
GRANT SELECT, INSERT ON docket_search_configs TO docket_app;

-- docket_chunk_search ranks the chunks of the transaction's tenant
-- (app.tenant_id, which row-level security reads too) that match query, with
-- the GIN index: at most ranked of them (NULL: all), in the order the
-- bitmap scan returns them (the heap's, so mostly the oldest). It runs as
-- the owner: under row-level security a qualifier whose operator is not
-- leakproof, as @@ is not, is only checked after the policy's, so the
-- tenant role's own statement could not use the index and read every chunk
-- of the tenant. The tenant condition is written here instead, and EXECUTE
-- plans with the query's value (GIN cannot estimate a parameter, and a
-- generic plan would scan).
CREATE FUNCTION docket_chunk_search(query tsquery, document text, lim int, vec_model text, vec_dims int, ranked int)
RETURNS TABLE (document_id text, idx int, text text, page_start int, page_end int, model text,
               dimensions int, vector bytea, filename text, rank real)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT
AS $$
BEGIN
    RETURN QUERY EXECUTE $q$
        WITH matches AS (
            SELECT c.document_id, c.idx, ts_rank(c.tsv, $1, 1) AS rank
            FROM docket_chunks c
            WHERE c.tsv @@ $1 AND c.tenant_id = current_setting('app.tenant_id', true)
                AND ($2 = '' OR c.document_id = $2)
            LIMIT $6
        ), top AS (
            SELECT * FROM matches ORDER BY rank DESC, document_id, idx LIMIT $3
        )
        SELECT c.document_id, c.idx, c.text, c.page_start, c.page_end, c.model, c.dimensions,
            CASE WHEN c.model = $4 AND c.dimensions = $5 THEN c.vector END, d.filename, top.rank
        FROM top
        JOIN docket_chunks c ON c.document_id = top.document_id AND c.idx = top.idx
        JOIN docket_documents d ON d.id = c.document_id
        ORDER BY top.rank DESC, top.document_id, top.idx$q$
    USING query, document, lim, vec_model, vec_dims, ranked;
END
$$;
REVOKE EXECUTE ON FUNCTION docket_chunk_search(tsquery, text, int, text, int, int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION docket_chunk_search(tsquery, text, int, text, int, int) TO docket_app;
