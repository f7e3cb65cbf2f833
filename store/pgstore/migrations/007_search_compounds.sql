-- Search at 10^6 chunks.
--
-- A chunk's tsvector stays in its row (STORAGE MAIN): the recheck of a
-- phrase and ts_rank read it for every match, and out of line (where it
-- went, some 1.5 KB next to a 1 KB vector) each read was a TOAST index
-- lookup and a TOAST page besides the row: the first 2,000 matches of
-- '0' <-> 'dimensional' at 10^5 chunks read 22,000 pages, 5,100 with the
-- tsvector in the row. The vector goes out of line instead (EXTERNAL: it
-- does not compress), as it is read only for the best 200 of a search.
-- Both apply to rows written from now on; rows stored before keep their
-- layout until they are written again (found alike, more slowly).
ALTER TABLE docket_chunks ALTER COLUMN tsv SET STORAGE MAIN, ALTER COLUMN vector SET STORAGE EXTERNAL;

-- function docket_compound: its current definition is repeatable/compounds.sql.

-- function docket_compounds: its current definition is repeatable/compounds.sql.

-- Rows stored before get theirs here, from their text lower-cased (the
-- driver takes them from the normalised text): runs of characters other
-- than spaces, ASCII and Latin-1 punctuation and the General Punctuation
-- block, joined by hyphens.
UPDATE docket_chunks SET tsv = tsv || docket_compounds(config, ARRAY(
    SELECT m[1] FROM regexp_matches(lower(text), '([^\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f\u00a0-\u00bf\u2000-\u206f[:space:]]+(?:-[^\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f\u00a0-\u00bf\u2000-\u206f[:space:]]+)+)', 'g') AS m
    WHERE octet_length(m[1]) <= 255))
WHERE text ~ '[^\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f\u00a0-\u00bf\u2000-\u206f[:space:]]-[^\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f\u00a0-\u00bf\u2000-\u206f[:space:]]';
