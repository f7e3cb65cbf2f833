package pgstore_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// statementLog records what a pool sends: statements one by one, and
// batches (each one round trip).
type statementLog struct {
	mu      sync.Mutex
	queries []string
	batches int
}

func (l *statementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queries = append(l.queries, d.SQL)
	return ctx
}

func (l *statementLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (l *statementLog) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.batches++
	return ctx
}

func (l *statementLog) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (l *statementLog) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// take returns what was sent since the last take.
func (l *statementLog) take() (queries []string, batches int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	queries, batches = l.queries, l.batches
	l.queries, l.batches = nil, 0
	return queries, batches
}

// TestChunkSearch_Scoped: Store.ChunkSearch is one round trip (one
// batch, no statement of its own) where ReadTenant and its ChunkSearch
// are four; it finds the tenant's chunks and never another's. Its scope
// (scopedRead) holds inside the batch — the app role, the tenant, row-level
// security, read-only — and ends with it, on the one connection of the
// pool, after a read and after a failed one.
func TestChunkSearch_Scoped(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cfg, err := pgxpool.ParseConfig(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	log := &statementLog{}
	cfg.ConnConfig.Tracer = log
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	d := storeOn(pool)
	var owner string
	if err := pool.QueryRow(ctx, `SELECT current_user`).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	for _, tn := range []string{"a", "b", "c"} {
		if _, err := d.TenantCreate(ctx, &docket.TenantCreateParams{ID: tn, Name: tn, Plan: docket.PlanFree}); err != nil {
			t.Fatal(err)
		}
	}
	for i, tn := range []string{"a", "b"} {
		chunks := make([]*docket.Chunk, i+2) // a: 2 chunks, b: 3
		for j := range chunks {
			chunks[j] = &docket.Chunk{Index: j, Text: "the shared word lighthouse, chunk " + tn, Vector: []float32{1, 0}, Model: "m", Dimensions: 2, Language: "en"}
		}
		err := d.InTenant(ctx, tn, func(tx docket.Tx) error {
			if err := tx.DocumentInsert(ctx, &docket.Document{ID: "doc-" + tn, Filename: "f.txt", ContentType: "text/plain", SHA256: "x", BlobKey: "b"}); err != nil {
				return err
			}
			return tx.ChunkReplace(ctx, "doc-"+tn, chunks)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	clean := func(after string) {
		t.Helper()
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		if err := checkConnClean(ctx, c, owner); err != nil {
			t.Errorf("the connection after %s: %v", after, err)
		}
	}

	p := &docket.ChunkSearchParams{Phrases: []string{"lighthouse"}, Model: "m", Dimensions: 2, Limit: 10}
	for tn, want := range map[string]int{"a": 2, "b": 3, "c": 0} {
		log.take()
		hits, err := d.ChunkSearch(ctx, tn, p)
		if err != nil {
			t.Fatal(err)
		}
		if queries, batches := log.take(); batches != 1 || len(queries) != 0 {
			t.Errorf("Store.ChunkSearch in %s: %d batches and statements %q, want one batch", tn, batches, queries)
		}
		if len(hits) != want {
			t.Errorf("Store.ChunkSearch in %s: %d hits, want %d", tn, len(hits), want)
		}
		for _, h := range hits {
			if h.Chunk.TenantID != tn || h.Chunk.DocumentID != "doc-"+tn || !strings.HasSuffix(h.Chunk.Text, " "+tn) {
				t.Errorf("Store.ChunkSearch in %s found %q of document %s", tn, h.Chunk.Text, h.Chunk.DocumentID)
			}
		}
		clean("Store.ChunkSearch in " + tn)
	}
	// The same search in ReadTenant: BEGIN, the scope, the search and
	// COMMIT, each a round trip.
	log.take()
	if err := d.ReadTenant(ctx, "a", func(tx docket.Tx) error { _, err := tx.ChunkSearch(ctx, p); return err }); err != nil {
		t.Fatal(err)
	}
	if queries, _ := log.take(); len(queries) != 4 {
		t.Errorf("ReadTenant's search: statements %q, want 4", queries)
	}

	// Inside the batch: the app role, the tenant, read-only, and row-level
	// security, which counts only the tenant's chunks (the owner sees 5).
	var user, tenant, readOnly string
	var chunks int
	err = d.ScopedRead(ctx, "b", `SELECT current_user, current_setting('app.tenant_id', true),
    current_setting('transaction_read_only'), (SELECT count(*) FROM docket_chunks)`, nil, func(rows pgx.Rows) error {
		defer rows.Close()
		for rows.Next() {
			if err := rows.Scan(&user, &tenant, &readOnly, &chunks); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := []any{user, tenant, readOnly, chunks}, []any{"docket_app", "b", "on", 3}; !slices.Equal(got, want) {
		t.Errorf("inside a scoped read: user, tenant, read-only, chunks %v, want %v", got, want)
	}
	clean("a scoped read")
	err = d.ScopedRead(ctx, "b", `INSERT INTO docket_search_configs (tenant_id, config) VALUES ('b', 'french')`, nil,
		func(rows pgx.Rows) error { rows.Close(); return rows.Err() })
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("a write in a scoped read: %v, want a read-only transaction's error", err)
	}
	clean("a failed scoped read")
	if _, err := d.ChunkSearch(ctx, "", p); err == nil {
		t.Error("Store.ChunkSearch without a tenant: no error")
	}
}
