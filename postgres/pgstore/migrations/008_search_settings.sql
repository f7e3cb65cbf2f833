-- Search at 10^6 chunks (issue 11): the search function runs with its own
-- work_mem and without parallel workers, set by its SET clauses on entry
-- and restored on exit, instead of by a statement of the search's
-- transaction before it (dd796a4), which also left them set for the rest
-- of the transaction.
--
-- work_mem bounds the bitmap the GIN index builds of every chunk that
-- holds a word, in every tenant, before the function's LIMIT applies: at
-- the default 4 MB it kept an entry a heap page (~27,000 for a word in
-- 28,567 of 10^6 chunks), and growing it, with the page faults of fresh
-- memory, was most of the search's CPU. At 64 kB it goes lossy (a bit a
-- page, every row of the ~2,000 pages read rechecked; the tsvector is in
-- the row). The other uses of work_mem in the statement are small: a
-- top-N sort of the matches, and the 200 rows the function returns (a
-- tuplestore, which spills the rest to a temporary file). With a lossy
-- bitmap the planner costs the heap scan higher and chose a Parallel
-- Bitmap Heap Scan, whose workers' start cost a word in 4,711 chunks
-- 0.6-1.1 s instead of 40-100 ms under load on 2 cores: no parallel
-- workers. docs/benchmarks.md has the measurements.
ALTER FUNCTION docket_chunk_search(tsquery, text, int, text, int, int)
    SET work_mem = '64kB'
    SET max_parallel_workers_per_gather = 0;
