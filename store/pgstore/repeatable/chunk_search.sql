-- after: 008

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
CREATE OR REPLACE FUNCTION docket_chunk_search(query tsquery, document text, lim int, vec_model text, vec_dims int, ranked int)
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

-- The function runs with its own work_mem, without parallel workers and
-- without synchronized scans (see migration 008 for the reasons).
ALTER FUNCTION docket_chunk_search(tsquery, text, int, text, int, int)
    SET work_mem = '64kB'
    SET max_parallel_workers_per_gather = 0
    SET synchronize_seqscans = off;

REVOKE EXECUTE ON FUNCTION docket_chunk_search(tsquery, text, int, text, int, int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION docket_chunk_search(tsquery, text, int, text, int, int) TO docket_app;
