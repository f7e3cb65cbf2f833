-- after: 006

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
CREATE OR REPLACE FUNCTION docket_compound(config regconfig, compound text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT CASE WHEN count(*) >= 2 THEN string_agg(u.lexeme, '-' ORDER BY p) END
    FROM unnest(to_tsvector(config, replace(compound, '-', ' '))) AS u, unnest(u.positions) AS p
$$;

-- docket_compounds is the tsvector of the compounds of a chunk indexed
-- with config.
CREATE OR REPLACE FUNCTION docket_compounds(config regconfig, compounds text[]) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT array_to_tsvector(coalesce(array_agg(DISTINCT l) FILTER (WHERE l IS NOT NULL), '{}'))
    FROM unnest(compounds) AS w, unnest(ARRAY[config, 'simple'::regconfig]) AS c,
        LATERAL docket_compound(c, w) AS l
$$;
