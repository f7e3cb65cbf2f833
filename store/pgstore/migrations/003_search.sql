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

-- function docket_chunk_search: its current definition is repeatable/chunk_search.sql.
