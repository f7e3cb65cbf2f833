package feed

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/sqlite"
)

// TestFeed_LivedAndEndedBetweenReads: a job enqueued and finished elsewhere
// between two re-reads (never seen active) still reaches subscribers.
func TestFeed_LivedAndEndedBetweenReads(t *testing.T) {
	ctx := t.Context()
	d, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	here := queue.NewClient(d, queue.ClientConfig{})
	// Its own bus: as far as the feed can tell, another process.
	elsewhere := queue.NewClient(d, queue.ClientConfig{})
	old, err := elsewhere.Enqueue(ctx, &queue.EnqueueParams{Queue: "documents", Kind: "k", TenantID: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := elsewhere.Cancel(ctx, old.Job.ID, "acme"); err != nil {
		t.Fatal(err)
	}

	f := startFeed(t, Config{Client: here, Queue: "documents", PollInterval: time.Hour})
	sub, err := f.Subscribe(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if len(sub.Snapshot) != 0 {
		t.Fatalf("snapshot %+v, want none", sub.Snapshot)
	}

	res, err := elsewhere.Enqueue(ctx, &queue.EnqueueParams{Queue: "documents", Kind: "k", TenantID: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := elsewhere.Cancel(ctx, res.Job.ID, "acme"); err != nil {
		t.Fatal(err)
	}
	if err := f.refreshTenant(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-sub.C:
		if c.Job.ID != res.Job.ID || c.Job.State != queue.StateCancelled {
			t.Errorf("change %+v, want job %d cancelled (and not the job cancelled before)", c.Job, res.Job.ID)
		}
	default:
		t.Fatal("no change")
	}
}
