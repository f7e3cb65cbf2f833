-- Search at 10^6 chunks: the search function runs with its own
-- work_mem, without parallel workers and without synchronized scans, set
-- by its SET clauses on entry and restored on exit (the first two were set
-- by a statement of the search's transaction before it, dd796a4, which
-- also left them set for the rest of the transaction).
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
-- workers.
--
-- A word the statistics put in a large share of the chunks is found by a
-- Seq Scan that stops at the LIMIT (2,000 matches, ~10,000 rows). On a
-- table larger than a quarter of shared_buffers a Seq Scan is synchronized:
-- it starts where the last one reported it was, so each search of such a
-- word read other pages than the one before (mostly not in shared_buffers:
-- 200-400 ms in the function at 10^6 chunks under load, ~1,000 reads) and
-- ranked another 2,000 of its matches, so the same search returned other
-- results each time. Without, the scan starts at the table's first page:
-- the same matches each time (those first in the heap, as
-- docket.ChunkSearchParams.Ranked says), from pages that stay cached
-- (25-30 ms). docs/benchmarks.md has the measurements.
ALTER FUNCTION docket_chunk_search(tsquery, text, int, text, int, int)
    SET work_mem = '64kB'
    SET max_parallel_workers_per_gather = 0
    SET synchronize_seqscans = off;
