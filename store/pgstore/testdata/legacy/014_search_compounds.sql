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

-- A hyphenated compound ("0-dimensionale", "whip-poor-will") is also a
-- lexeme of its own, so that a search for it is one index lookup: as a
-- phrase ('0' <-> 'dimensional') every chunk with both words was read to
-- check that they are adjacent, 6% of the chunks when the first is a
-- digit in nearly all of them. PostgreSQL's parser makes such a lexeme of
-- letters-only compounds, not of those with a number, and stems them whole.
-- docket_compound gives a compound's lexeme under a configuration: its
-- words' lexemes in order, joined by hyphens ("0-dimensionalen" and
-- "0-dimensionale" are both '0-dimensional' in german), NULL when fewer
-- than two words are left (stop words dropped). A chunk holds its
-- compounds' lexemes under its own configuration and 'simple' (the driver
-- adds them on insert, from the normalised text), and a search for a
-- compound looks for its lexeme under every configuration of the tenant.
CREATE FUNCTION docket_compound(config regconfig, compound text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT CASE WHEN count(*) >= 2 THEN string_agg(u.lexeme, '-' ORDER BY p) END
    FROM unnest(to_tsvector(config, replace(compound, '-', ' '))) AS u, unnest(u.positions) AS p
$$;

-- docket_compounds is the tsvector of the compounds of a chunk indexed
-- with config.
CREATE FUNCTION docket_compounds(config regconfig, compounds text[]) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT array_to_tsvector(coalesce(array_agg(DISTINCT l) FILTER (WHERE l IS NOT NULL), '{}'))
    FROM unnest(compounds) AS w, unnest(ARRAY[config, 'simple'::regconfig]) AS c,
        LATERAL docket_compound(c, w) AS l
$$;

-- Rows stored before get theirs here, from their text lower-cased (the
-- driver takes them from the normalised text): runs of characters other
-- than spaces, ASCII and Latin-1 punctuation and the General Punctuation
-- block, joined by hyphens.
UPDATE docket_chunks SET tsv = tsv || docket_compounds(config, ARRAY(
    SELECT m[1] FROM regexp_matches(lower(text), '([^\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f\u00a0-\u00bf\u2000-\u206f[:space:]]+(?:-[^\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f\u00a0-\u00bf\u2000-\u206f[:space:]]+)+)', 'g') AS m
    WHERE octet_length(m[1]) <= 255))
WHERE text ~ '[^\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f\u00a0-\u00bf\u2000-\u206f[:space:]]-[^\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f\u00a0-\u00bf\u2000-\u206f[:space:]]';
