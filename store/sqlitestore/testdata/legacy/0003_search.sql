-- Search: a full-text index of the chunks, and the index a
-- document's chunks are reached by.
--
-- The chunks table is rebuilt with an explicit INTEGER PRIMARY KEY: the
-- FTS5 index refers to chunks by rowid, and VACUUM renumbers the implicit
-- rowids of a table without one. The tenant's index (tenant_id, model,
-- dimensions) goes: a search no longer scans a tenant's vectors, and with
-- it the planner took the tenant index for the DELETE of a document's
-- chunks and walked every chunk of the tenant (1.1 s at 1.18 M chunks).

CREATE TABLE docket_chunks_v2 (
	id          INTEGER PRIMARY KEY,
	document_id TEXT    NOT NULL REFERENCES docket_documents (id) ON DELETE CASCADE,
	idx         INTEGER NOT NULL CHECK (idx >= 0),
	tenant_id   TEXT    NOT NULL,
	text        TEXT    NOT NULL,
	page_start  INTEGER NOT NULL DEFAULT 0,
	page_end    INTEGER NOT NULL DEFAULT 0,
	model       TEXT    NOT NULL DEFAULT '',
	dimensions  INTEGER NOT NULL DEFAULT 0,
	vector      BLOB
) STRICT;

INSERT INTO docket_chunks_v2 (document_id, idx, tenant_id, text, page_start, page_end, model, dimensions, vector)
SELECT document_id, idx, tenant_id, text, page_start, page_end, model, dimensions, vector
FROM docket_chunks ORDER BY document_id, idx;

DROP TABLE docket_chunks;
ALTER TABLE docket_chunks_v2 RENAME TO docket_chunks;

-- A document's chunks in order: ChunkReplace's DELETE, ChunkList, the
-- cascade from docket_documents. Document ids are unique across tenants.
CREATE UNIQUE INDEX docket_chunks_document ON docket_chunks (document_id, idx);
-- A search's matches by id, with what it filters and sorts them by: a
-- match is checked against the tenant in this small index, not by reading
-- its row (a random page of a table of texts and vectors each: 0.7 s at
-- the 99th percentile with 10^6 chunks).
CREATE UNIQUE INDEX docket_chunks_match ON docket_chunks (id, tenant_id, document_id, idx);

-- The words of each chunk (external content: the text stays in
-- docket_chunks). Porter stemming over Unicode words without diacritics:
-- "payments" finds "payment", "Wurfel" finds "Würfel". unicode61 counts
-- private-use characters as letters; the separators are those of them
-- that PDFs made with TeX use for the pieces of brackets, braces and
-- parentheses (U+F8E5-U+F8FF, the Symbol font's), found glued to the
-- formula beside them ("x1x2" after U+F8ED).
CREATE VIRTUAL TABLE docket_chunks_fts USING fts5 (
	text,
	content = 'docket_chunks',
	content_rowid = 'id',
	tokenize = "porter unicode61 remove_diacritics 2 separators ''"
);

-- Chunks are inserted and deleted, never updated (ChunkReplace).
CREATE TRIGGER docket_chunks_fts_insert AFTER INSERT ON docket_chunks BEGIN
	INSERT INTO docket_chunks_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER docket_chunks_fts_delete AFTER DELETE ON docket_chunks BEGIN
	INSERT INTO docket_chunks_fts (docket_chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER docket_chunks_fts_update AFTER UPDATE OF text ON docket_chunks BEGIN
	INSERT INTO docket_chunks_fts (docket_chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
	INSERT INTO docket_chunks_fts (rowid, text) VALUES (new.id, new.text);
END;

INSERT INTO docket_chunks_fts (docket_chunks_fts) VALUES ('rebuild');
