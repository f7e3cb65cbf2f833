package search_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/docketq/docket"
	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/internal/storepair"
	"github.com/docketq/docket/search"
)

// BenchmarkSearch measures the latency of GET /v1/search's work (package
// search over a store: the index, the candidates' vectors, the fusion, the
// snippets) with one tenant at each size in DOCKET_SEARCH_SIZES (chunks,
// comma-separated; default 10000), on both stores or those named in
// DOCKET_SEARCH_STORES (sqlite, postgres). The tenant holds the
// real documents of TestSearch_Recall and background documents of 1,000
// chunks of 120 words drawn from a Zipf distribution (s 1.1) over a
// vocabulary of 200,000 words whose head is the real documents' words by
// frequency, so that a real word is in more chunks as the tenant grows.
//
// Two query sets, each searched once to warm up and then measured:
// "exact", the known-answer queries of TestSearch_Recall (a rare word,
// compound or code each), and "common", the 20 most frequent real words
// that are no function words (each in a large share of the chunks). The
// metrics are the p50 and p99 of one search, in milliseconds.
//
//	DOCKET_SEARCH_SIZES=10000,100000,1000000 go test -run '^$' -bench Search -benchtime 1x -timeout 2h ./search/
//
// With DOCKET_SEARCH_KEEP set, the loaded stores are kept and measured
// again by later runs (envKeep).
func BenchmarkSearch(b *testing.B) {
	docs := loadCorpus(b)
	sizes := []int{10000}
	if env := os.Getenv("DOCKET_SEARCH_SIZES"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatalf("DOCKET_SEARCH_SIZES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	for _, st := range stores {
		if only := os.Getenv("DOCKET_SEARCH_STORES"); only != "" && !slices.Contains(strings.Split(only, ","), st.name) {
			continue
		}
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/chunks=%d", st.name, n), func(b *testing.B) {
				s := &search.Searcher{Embedder: embedding.NewHashing(0)}
				kept, loaded, keep := openKept(b, st.name, n)
				var tenantID string
				var byID map[string]corpusDoc
				if loaded {
					s.Store, tenantID, byID = kept, corpusTenant, corpusByID(docs)
					b.Logf("%s: kept store of %d chunks (%s)", st.name, n, envKeep)
				} else {
					if s.Store = kept; !keep {
						s.Store = st.open(b)
					}
					tenantID, byID = storeCorpus(b, s.Store, s.Embedder, docs)
					start := time.Now()
					restore := withoutTextIndex(b, s.Store)
					total := fillBackground(b, s.Store, tenantID, docs, n)
					total += copyBackground(b, s.Store, n-total)
					restore()
					analyzeStore(b, s.Store)
					b.Logf("%s: %d chunks (%d background) stored and analysed in %s", st.name, total, total-corpusChunks(docs), time.Since(start).Round(time.Second))
					if keep {
						markKept(b, s.Store)
					}
				}
				exact := knownAnswers(byID, 300)
				sets := map[string][]string{"exact": nil, "common": commonWords(docs, 20)}
				for _, q := range exact {
					sets["exact"] = append(sets["exact"], q.query)
				}
				b.ResetTimer()
				for range b.N {
					for _, name := range []string{"exact", "common"} {
						p50, p99 := latencies(b, s, tenantID, sets[name])
						b.ReportMetric(p50, name+"-p50-ms")
						b.ReportMetric(p99, name+"-p99-ms")
					}
				}
			})
		}
	}
}

// latencies searches each query once to warm up, then once more timed,
// and returns the p50 and p99 in milliseconds.
func latencies(b *testing.B, s *search.Searcher, tenantID string, queries []string) (p50, p99 float64) {
	b.Helper()
	ctx := context.Background()
	var ds []time.Duration
	slowest, slowestQ := time.Duration(0), ""
	for pass := range 2 {
		for _, q := range queries {
			start := time.Now()
			if _, err := s.Search(ctx, &search.Params{TenantID: tenantID, Query: q, K: 10}); err != nil {
				b.Fatalf("search %q: %v", q, err)
			}
			if d := time.Since(start); pass == 1 {
				ds = append(ds, d)
				if d > slowest {
					slowest, slowestQ = d, q
				}
			}
		}
	}
	b.Logf("%d queries; slowest %q, %s", len(queries), slowestQ, slowest.Round(time.Millisecond))
	slices.Sort(ds)
	at := func(p float64) float64 {
		return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))]) / float64(time.Millisecond)
	}
	return at(0.50), at(0.99)
}

func corpusChunks(docs []corpusDoc) int {
	n := 0
	for _, d := range docs {
		n += len(d.chunks)
	}
	return n
}

// wordsByFrequency returns the real documents' words (lower case), most
// frequent first.
func wordsByFrequency(docs []corpusDoc) []string {
	count := map[string]int{}
	for _, d := range docs {
		for _, c := range d.chunks {
			for _, w := range strings.FieldsFunc(c.Text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
				count[strings.ToLower(w)]++
			}
		}
	}
	words := make([]string, 0, len(count))
	for w := range count {
		words = append(words, w)
	}
	slices.SortFunc(words, func(a, b string) int {
		if count[a] != count[b] {
			return count[b] - count[a]
		}
		return strings.Compare(a, b)
	})
	return words
}

// commonWords returns the n most frequent real words of 4 letters or more
// that are no function words.
func commonWords(docs []corpusDoc, n int) []string {
	var out []string
	for _, w := range wordsByFrequency(docs) {
		if len(out) == n {
			break
		}
		if len([]rune(w)) >= 4 && !embedding.IsStopword(w) && !strings.ContainsFunc(w, unicode.IsDigit) {
			out = append(out, w)
		}
	}
	return out
}

// pgGenerated caps the background chunks generated on PostgreSQL, which
// computes their tsvectors at some 1,000 chunks a second on this machine;
// copyBackground copies them up to the size.
const pgGenerated = 100000

// fillBackground adds documents of 1,000 generated chunks to the tenant
// until it has n chunks (on PostgreSQL at most pgGenerated background
// chunks), and returns how many it has.
func fillBackground(b *testing.B, s docket.Store, tenantID string, docs []corpusDoc, n int) int {
	b.Helper()
	if _, ok := s.(*storepair.Postgres); ok {
		n = min(n, corpusChunks(docs)+pgGenerated)
	}
	const perDoc, wordsPerChunk, vocabulary = 1000, 120, 200000
	vocab := wordsByFrequency(docs)
	for i := len(vocab); i < vocabulary; i++ {
		vocab = append(vocab, syntheticWord(i))
	}
	r := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(r, 1.1, 1, vocabulary-1)
	vectors := make([][]float32, 512) // the vectors' values do not matter to latency, their size does
	for i := range vectors {
		vectors[i] = make([]float32, embedding.DefaultDimensions)
		for j := range vectors[i] {
			vectors[i][j] = r.Float32() - 0.5
		}
	}
	ctx := context.Background()
	total := corpusChunks(docs)
	var sb strings.Builder
	for d := 0; total < n; d++ {
		id := fmt.Sprintf("00000000-0000-4000-9000-%012d", d)
		cs := make([]*docket.Chunk, min(perDoc, n-total))
		for i := range cs {
			sb.Reset()
			for w := range wordsPerChunk {
				if w > 0 {
					sb.WriteByte(' ')
				}
				sb.WriteString(vocab[zipf.Uint64()])
			}
			cs[i] = &docket.Chunk{Index: i, Text: sb.String(), PageStart: 1 + i/3, PageEnd: 1 + i/3,
				Vector: vectors[(d*perDoc+i)%len(vectors)], Model: embedding.HashingModel,
				Dimensions: embedding.DefaultDimensions, Language: "en"}
		}
		err := s.InTenant(ctx, tenantID, func(tx docket.Tx) error {
			doc := &docket.Document{ID: id, Filename: fmt.Sprintf("background-%d.txt", d), ContentType: "text/plain",
				SHA256: "x", BlobKey: "b/" + id}
			if err := tx.DocumentInsert(ctx, doc); err != nil {
				return err
			}
			return tx.ChunkReplace(ctx, id, cs)
		})
		if err != nil {
			b.Fatal(err)
		}
		total += len(cs)
	}
	return total
}

// copyBackground adds missing chunks to a PostgreSQL store by copying its
// background documents with their chunks, tsvectors included, under new
// ids (as the owner, in SQL), and returns how many it added. Each copy of
// a generated chunk is then in the tenant several times, as a word in a
// chunk in 10^5 is in ten in 10^6.
func copyBackground(b *testing.B, s docket.Store, missing int) int {
	b.Helper()
	d, ok := s.(*storepair.Postgres)
	if !ok || missing <= 0 {
		return 0
	}
	ctx := context.Background()
	added := 0
	for k := 1; added < missing; k++ {
		tag, err := d.Pool().Exec(ctx, `WITH docs AS (
    INSERT INTO docket_documents (id, tenant_id, filename, content_type, sha256, blob_key)
    SELECT 'copy' || $1 || '-' || id, tenant_id, filename, content_type, sha256, blob_key
    FROM docket_documents WHERE id LIKE '00000000-0000-4000-9000-%' RETURNING id
)
INSERT INTO docket_chunks (tenant_id, document_id, idx, text, page_start, page_end, vector, model, dimensions, config, tsv)
SELECT c.tenant_id, 'copy' || $1 || '-' || c.document_id, c.idx, c.text, c.page_start, c.page_end, c.vector, c.model,
    c.dimensions, c.config, c.tsv
FROM docket_chunks c WHERE c.document_id LIKE '00000000-0000-4000-9000-%'
ORDER BY c.document_id, c.idx LIMIT $2`, strconv.Itoa(k), missing-added)
		if err != nil {
			b.Fatal(err)
		}
		added += int(tag.RowsAffected())
	}
	return added
}

// withoutTextIndex drops PostgreSQL's GIN index for a bulk load (kept up
// row by row, it made 10^6 chunks an hour's load) and returns the function
// that builds it again as it was. Other stores are left as they are.
func withoutTextIndex(b *testing.B, s docket.Store) (restore func()) {
	b.Helper()
	d, ok := s.(*storepair.Postgres)
	if !ok {
		return func() {}
	}
	ctx := context.Background()
	var def string
	if err := d.Pool().QueryRow(ctx, `SELECT indexdef FROM pg_indexes WHERE indexname = 'docket_chunks_tsv'`).Scan(&def); err != nil {
		b.Fatal(err)
	}
	if _, err := d.Pool().Exec(ctx, `DROP INDEX docket_chunks_tsv`); err != nil {
		b.Fatal(err)
	}
	return func() {
		conn, err := d.Pool().Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Release()
		if _, err := conn.Exec(ctx, `SET maintenance_work_mem = '1GB'`); err != nil {
			b.Fatal(err)
		}
		if _, err := conn.Exec(ctx, def); err != nil {
			b.Fatal(err)
		}
	}
}

// analyzeStore updates the planner's statistics, as autovacuum (PostgreSQL) or
// PRAGMA optimize (SQLite) would after a load, so that a plan is not made
// for tables the planner believes empty.
func analyzeStore(b *testing.B, s docket.Store) {
	b.Helper()
	var err error
	switch d := s.(type) {
	case *storepair.Postgres:
		_, err = d.Pool().Exec(context.Background(), "ANALYZE")
	case *storepair.SQLite:
		_, err = d.DB().ExecContext(context.Background(), "ANALYZE")
	}
	if err != nil {
		b.Fatal(err)
	}
}

// syntheticWord is the i-th word of the vocabulary's tail: letters only,
// five to nine of them.
func syntheticWord(i int) string {
	const consonants, vowels = "bcdfghklmnprstvz", "aeiou"
	var sb strings.Builder
	for x := i; sb.Len() < 5 || x > 0; x /= 80 {
		sb.WriteByte(consonants[x%16])
		sb.WriteByte(vowels[(x/16)%5])
	}
	return sb.String()
}
