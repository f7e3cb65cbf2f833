package sqlitestore_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// TestDocs_StatusDerived: a document's status is its job's state as
// StatusOf maps it, or the recorded status when there is no such job of
// the tenant.
func TestDocs_StatusDerived(t *testing.T) {
	t.Parallel()
	for _, tt := range statusCases() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, clk := setupDocs(t)
			jobID := tt.job(t, d, clk)
			inTenant(t, d, func(tx docket.Tx) error {
				doc := newDoc("d1")
				doc.JobID, doc.Status = jobID, tt.recorded
				return tx.DocumentInsert(t.Context(), doc)
			})
			doc, err := getDoc(t, d, "t1", "d1")
			if err != nil || doc.Status != tt.want {
				t.Fatalf("DocumentGet = %+v, %v; want status %s", doc, err, tt.want)
			}
			list := listDocs(t, d, &docket.DocumentListParams{Status: tt.want})
			if len(list) != 1 || list[0].Status != tt.want {
				t.Fatalf("DocumentList(status %s) = %v", tt.want, ids(list))
			}
		})
	}
}

// statusCase is a document whose job, made by job, is in some state.
type statusCase struct {
	name     string
	recorded docket.DocumentStatus
	job      func(t *testing.T, d *testStore, clk *testClock) int64
	want     docket.DocumentStatus
}

func statusCases() []statusCase {
	enqueue := func(t *testing.T, d *testStore, clk *testClock, tenant string, runIn time.Duration) int64 {
		t.Helper()
		res, err := queue.NewClient(d, queue.ClientConfig{}).Enqueue(t.Context(), &queue.EnqueueParams{
			Kind: "process", TenantID: tenant, RunAt: clk.Now().Add(runIn),
		})
		if err != nil {
			t.Fatalf("Enqueue: %v", err)
		}
		return res.Job.ID
	}
	return []statusCase{
		{"pending job", docket.StatusFailed, func(t *testing.T, d *testStore, clk *testClock) int64 {
			return enqueue(t, d, clk, "t1", 0)
		}, docket.StatusPending},
		{"scheduled job", docket.StatusFailed, func(t *testing.T, d *testStore, clk *testClock) int64 {
			return enqueue(t, d, clk, "t1", time.Hour)
		}, docket.StatusPending},
		{"running job", docket.StatusPending, func(t *testing.T, d *testStore, clk *testClock) int64 {
			id := enqueue(t, d, clk, "t1", 0)
			jobs, _, err := d.Executor().JobClaim(t.Context(), &driver.JobClaimParams{Queue: queue.DefaultQueue, WorkerID: "w", Max: 1, LeaseDuration: time.Minute})
			if err != nil || len(jobs) != 1 {
				t.Fatalf("JobClaim: %v, %v", jobs, err)
			}
			return id
		}, docket.StatusProcessing},
		{"cancelled job", docket.StatusPending, func(t *testing.T, d *testStore, clk *testClock) int64 {
			id := enqueue(t, d, clk, "t1", 0)
			if _, err := queue.NewClient(d, queue.ClientConfig{}).Cancel(t.Context(), id, "t1"); err != nil {
				t.Fatalf("Cancel: %v", err)
			}
			return id
		}, docket.StatusCancelled},
		{"job gone", docket.StatusCompleted, func(*testing.T, *testStore, *testClock) int64 { return 424242 }, docket.StatusCompleted},
		{"no job", docket.StatusFailed, func(*testing.T, *testStore, *testClock) int64 { return 0 }, docket.StatusFailed},
		{"job of another tenant", docket.StatusFailed, func(t *testing.T, d *testStore, clk *testClock) int64 {
			return enqueue(t, d, clk, "t2", 0)
		}, docket.StatusFailed},
	}
}

func listDocs(t *testing.T, d *testStore, p *docket.DocumentListParams) []*docket.Document {
	t.Helper()
	var out []*docket.Document
	err := d.ReadTenant(t.Context(), "t1", func(tx docket.Tx) error {
		var err error
		out, err = tx.DocumentList(t.Context(), p)
		return err
	})
	if err != nil {
		t.Fatalf("DocumentList(%+v): %v", p, err)
	}
	return out
}

func ids(docs []*docket.Document) []string {
	out := []string{}
	for _, d := range docs {
		out = append(out, d.ID)
	}
	return out
}

// TestDocs_ListPages lists newest first by (created_at, id), filtered by
// status, a page at a time.
func TestDocs_ListPages(t *testing.T) {
	t.Parallel()
	d, clk := setupDocs(t)
	for i, id := range []string{"a0", "a1", "a2", "a3", "b3"} {
		if i < 4 {
			clk.Add(time.Second) // a3 and b3 share a creation time
		}
		inTenant(t, d, func(tx docket.Tx) error {
			doc := newDoc(id)
			if i%2 == 1 {
				doc.Status = docket.StatusFailed
			}
			return tx.DocumentInsert(t.Context(), doc)
		})
	}
	tests := []struct {
		name   string
		params docket.DocumentListParams
		want   []string
	}{
		{"all", docket.DocumentListParams{}, []string{"b3", "a3", "a2", "a1", "a0"}},
		{"first page", docket.DocumentListParams{Limit: 2}, []string{"b3", "a3"}},
		{"tie page", docket.DocumentListParams{Before: "b3", Limit: 1}, []string{"a3"}},
		{"next page", docket.DocumentListParams{Before: "a3", Limit: 2}, []string{"a2", "a1"}},
		{"last page", docket.DocumentListParams{Before: "a1", Limit: 2}, []string{"a0"}},
		{"failed", docket.DocumentListParams{Status: docket.StatusFailed}, []string{"a3", "a1"}},
		{"pending after a3", docket.DocumentListParams{Status: docket.StatusPending, Before: "a3"}, []string{"a2", "a0"}},
		{"completed", docket.DocumentListParams{Status: docket.StatusCompleted}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ids(listDocs(t, d, &tt.params)); !slices.Equal(got, tt.want) {
				t.Fatalf("DocumentList(%+v) = %v, want %v", tt.params, got, tt.want)
			}
		})
	}
	err := d.ReadTenant(t.Context(), "t1", func(tx docket.Tx) error {
		_, err := tx.DocumentList(t.Context(), &docket.DocumentListParams{Status: "lost"})
		return err
	})
	if !errors.Is(err, docket.ErrInvalid) {
		t.Fatalf("DocumentList(bad status) = %v, want ErrInvalid", err)
	}
}

// TestDocs_Chunks: replace, list without vectors, search with vectors,
// and the chunks go with their document.
func TestDocs_Chunks(t *testing.T) {
	t.Parallel()
	d, _ := setupDocs(t)
	ctx := t.Context()
	vec := []float32{1, -0.5, 3.25}
	inTenant(t, d, func(tx docket.Tx) error {
		if err := tx.DocumentInsert(ctx, newDoc("d1")); err != nil {
			return err
		}
		return tx.ChunkReplace(ctx, "d1", []*docket.Chunk{
			{Index: 0, Text: "zero", PageStart: 1, PageEnd: 1, Vector: vec, Model: "m"},
			{Index: 1, Text: "one", PageStart: 1, PageEnd: 2, Vector: vec, Model: "m"},
			{Index: 2, Text: "other model", Vector: vec, Model: "n"},
		})
	})
	err := d.ReadTenant(ctx, "t1", func(tx docket.Tx) error {
		list, err := tx.ChunkList(ctx, &docket.ChunkListParams{DocumentID: "d1"})
		if err != nil || len(list) != 3 || list[1].Text != "one" || list[1].PageEnd != 2 || list[1].Vector != nil ||
			list[1].TenantID != "t1" || list[1].Dimensions != 3 {
			t.Fatalf("ChunkList = %+v, %v", list, err)
		}
		hits, err := tx.ChunkSearch(ctx, &docket.ChunkSearchParams{Phrases: []string{"zero", "one", "other"},
			Any: true, Model: "m", Dimensions: 3, Limit: 10})
		if err != nil || len(hits) != 3 {
			t.Fatalf("ChunkSearch = %+v, %v; want 3 chunks", hits, err)
		}
		for _, h := range hits {
			if (h.Chunk.Model == "m") != slices.Equal(h.Chunk.Vector, vec) {
				t.Fatalf("chunk %d of model %s has vector %v", h.Chunk.Index, h.Chunk.Model, h.Chunk.Vector)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	inTenant(t, d, func(tx docket.Tx) error {
		_, err := tx.DocumentDelete(ctx, "d1")
		return err
	})
	err = d.ReadTenant(ctx, "t1", func(tx docket.Tx) error {
		hits, err := tx.ChunkSearch(ctx, &docket.ChunkSearchParams{Phrases: []string{"zero", "one", "other"}, Any: true, Limit: 10})
		for _, h := range hits {
			t.Errorf("chunk %d of deleted document %s found", h.Chunk.Index, h.Chunk.DocumentID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
