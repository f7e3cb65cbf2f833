-- The full-text index per tenant: every word indexed is its tenant's own
-- (docs_chunk_terms.go). A search matched across all tenants and kept its
-- tenant's rows in a join, and FTS5 counted each phrase's rows over the
-- whole index for BM25, so one tenant's search read every other tenant's
-- chunks holding its words. Its words are now indexed behind the
-- tenant's prefix by docket_terms(tenant_id, text), a function the
-- store's package registers, and a search writes its phrases the same
-- way: it reads its tenant's doclists only.
--
-- The index is contentless (it keeps no copy of the text, as with
-- external content) and deletes by rowid (contentless_delete), so a
-- chunk's row leaves the index without its indexed words being computed
-- again. Searches read the rowid and the rank (bm25 reads the index's own
-- sizes), never the columns.

DROP TRIGGER IF EXISTS docket_chunks_fts_insert;
DROP TRIGGER IF EXISTS docket_chunks_fts_delete;
DROP TRIGGER IF EXISTS docket_chunks_fts_update;
DROP TABLE docket_chunks_fts;

CREATE VIRTUAL TABLE docket_chunks_fts USING fts5 (
	text,
	compounds,
	content = '',
	contentless_delete = 1,
	tokenize = "porter unicode61 remove_diacritics 2 separators ''"
);

-- trigger docket_chunks_fts_insert: its current definition is repeatable/chunks_fts.sql.
-- trigger docket_chunks_fts_delete: its current definition is repeatable/chunks_fts.sql.
-- trigger docket_chunks_fts_update: its current definition is repeatable/chunks_fts.sql.

INSERT INTO docket_chunks_fts (rowid, text, compounds)
SELECT id, docket_terms(tenant_id, text), docket_terms(tenant_id, compounds) FROM docket_chunks ORDER BY id;
