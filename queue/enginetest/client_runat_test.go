package queue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// A RunAt past what the stores keep was taken as given: SQLite stores
// times as int64 microseconds, so the year 300000 wrapped round to the
// year -284555 and the job, meant for later, was pending and ran at once;
// PostgreSQL refused it with an error that was no sentinel ("timestamp out
// of range", 22008). A RunAt after 9999 (or before year 1) was stored by
// both and broke every JSON view of the job (encoding/json refuses such
// times). Now such a RunAt is ErrInvalid and nothing is stored.
func TestClient_EnqueueRunAtOutOfRange(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := queue.NewClient(s.driver, queue.ClientConfig{})
		for _, at := range []time.Time{
			time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC),
		} {
			res, err := c.Enqueue(ctx, &queue.EnqueueParams{Kind: "later", TenantID: "t", RunAt: at})
			if !errors.Is(err, queue.ErrInvalid) {
				if err == nil {
					t.Errorf("RunAt %s: enqueued, %s with RunAt %s; want ErrInvalid", at, res.Job.State, res.Job.RunAt)
				} else {
					t.Errorf("RunAt %s: %v; want ErrInvalid", at, err)
				}
			}
		}
		jobs, err := c.List(ctx, &queue.JobListParams{Kind: "later"})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 0 {
			t.Errorf("%d jobs stored, want none", len(jobs))
		}
		// The last representable moments are fine.
		for _, at := range []time.Time{time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(1, 1, 2, 0, 0, 0, 0, time.UTC)} {
			if _, err := c.Enqueue(ctx, &queue.EnqueueParams{Kind: "edge", TenantID: "t", RunAt: at}); err != nil {
				t.Errorf("RunAt %s: %v", at, err)
			}
		}
	})
}
