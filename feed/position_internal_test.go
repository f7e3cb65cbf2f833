package feed

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/sqlite"
)

func TestPositions(t *testing.T) {
	job := func(id int64, s queue.State, prio int) *queue.Job {
		return &queue.Job{ID: id, State: s, Priority: prio}
	}
	jobs := []*queue.Job{
		job(1, queue.StateRunning, 0), job(2, queue.StatePending, 0), job(3, queue.StatePending, 9),
		job(4, queue.StateScheduled, 0), job(5, queue.StatePending, 0),
	}
	tests := []struct {
		name string
		base aheadBase
		want map[int64]int
	}{
		{"all listed", aheadBase{}, map[int64]int{3: 0, 2: 1, 5: 2, 4: 3}},
		{"capped", aheadBase{byPriority: map[int]int{9: 1, 0: 10}, all: 12}, map[int64]int{3: 1, 2: 11, 5: 12, 4: 15}},
		// Priority 0 not anchored: the nearest anchored priority above.
		{"unanchored", aheadBase{byPriority: map[int]int{9: 1}, all: 1}, map[int64]int{3: 1, 2: 2, 5: 3, 4: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := positions(jobs, tt.base)
			if len(got) != len(tt.want) {
				t.Fatalf("positions = %v, want %v", got, tt.want)
			}
			for id, p := range tt.want {
				if got[id] != p {
					t.Errorf("job %d at %d, want %d (all: %v)", id, got[id], p, got)
				}
			}
		})
	}
}

// TestFeed_CappedTenant: a tenant with more waiting jobs than are tracked
// gets the positions the store counts, and they move when an untracked job
// ahead leaves.
func TestFeed_CappedTenant(t *testing.T) {
	old := trackLimit
	trackLimit = 3
	t.Cleanup(func() { trackLimit = old })
	ctx := t.Context()
	d, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	client := queue.NewClient(d, queue.ClientConfig{})
	var ids []int64
	for i := range 7 {
		prio := 0
		if i == 6 {
			prio = 5
		}
		res, err := client.Enqueue(ctx, &queue.EnqueueParams{Queue: "documents", Kind: "k", TenantID: "acme", Priority: prio})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Job.ID)
	}
	f := startFeed(t, Config{Client: client, Queue: "documents", Debounce: time.Millisecond})

	sub, err := f.Subscribe(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	got := map[int64]int{}
	for _, c := range sub.Snapshot {
		got[c.Job.ID] = c.Position
	}
	want := map[int64]int{ids[6]: 0, ids[4]: 5, ids[5]: 6}
	if len(got) != len(want) || got[ids[6]] != 0 || got[ids[4]] != 5 || got[ids[5]] != 6 {
		t.Fatalf("snapshot positions %v, want %v", got, want)
	}

	if _, err := client.Cancel(ctx, ids[0], "acme"); err != nil {
		t.Fatal(err)
	}
	want = map[int64]int{ids[4]: 4, ids[5]: 5}
	deadline := time.After(10 * time.Second)
	for len(want) > 0 {
		select {
		case c := <-sub.C:
			if p, ok := want[c.Job.ID]; ok && p == c.Position {
				delete(want, c.Job.ID)
			}
		case <-deadline:
			t.Fatalf("positions never moved up: still waiting for %v", want)
		}
	}
}
