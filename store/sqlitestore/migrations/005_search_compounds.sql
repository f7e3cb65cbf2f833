-- Search at 10^6 chunks: a hyphenated compound is also a token
-- of its own, as on PostgreSQL (pgstore's 007_search_compounds.sql).
--
-- A search for "x-Achse" or "0-dimensionale" was the phrase of its words,
-- and FTS5 read the positions of every chunk holding both ("x" and "0"
-- are in most chunks) to check that they are adjacent: 0.2-2.7 s at 10^6
-- chunks. Each chunk now has a compounds column: the tokens of its
-- compounds, their words joined by U+E000 (a private-use character, which
-- the tokenizer counts as a letter), space-separated, one per occurrence;
-- the driver fills it on insert (docs_chunk_compound.go), and the full-text
-- index has it as a second column. A search for one compound looks up its
-- token in that column: one doclist, no positions compared. Other
-- searches match the text column as before: their tokens have no U+E000
-- unless what was typed has, the compounds column adds nothing
-- to their BM25 (a column without the phrase scores 0 in it), and the
-- number of chunks holding a phrase is unchanged, so their results and
-- ranks are the same.

-- FTS5 cannot add a column: the index is dropped, and rebuilt below from
-- the text and the new column.
DROP TRIGGER IF EXISTS docket_chunks_fts_insert;
DROP TRIGGER IF EXISTS docket_chunks_fts_delete;
DROP TRIGGER IF EXISTS docket_chunks_fts_update;
DROP TABLE docket_chunks_fts;

ALTER TABLE docket_chunks ADD COLUMN compounds TEXT NOT NULL DEFAULT '';
-- Chunks stored before: docket_compounds (registered by the store's
-- package, docs_chunk_compound.go) is what the driver computes on insert.
UPDATE docket_chunks SET compounds = docket_compounds(text) WHERE text LIKE '%_-_%';

CREATE VIRTUAL TABLE docket_chunks_fts USING fts5 (
	text,
	compounds,
	content = 'docket_chunks',
	content_rowid = 'id',
	tokenize = "porter unicode61 remove_diacritics 2 separators ''"
);

-- trigger docket_chunks_fts_insert: its current definition is repeatable/chunks_fts.sql.
-- trigger docket_chunks_fts_delete: its current definition is repeatable/chunks_fts.sql.
-- trigger docket_chunks_fts_update: its current definition is repeatable/chunks_fts.sql.

INSERT INTO docket_chunks_fts (docket_chunks_fts) VALUES ('rebuild');
