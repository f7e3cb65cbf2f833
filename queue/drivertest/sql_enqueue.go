package drivertest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// testSQLEnqueue checks the store's SQL enqueue function, which lets a
// trigger or another language add jobs (docs/library.md, "Enqueue from SQL").
func (s *suite) testSQLEnqueue(t *testing.T) {
	t.Run("Enqueue", func(t *testing.T) {
		t.Parallel()
		f := s.sqlSetup(t)
		p := params("acme")
		p.Args, p.Priority, p.MaxAttempts, p.UniqueKey = json.RawMessage(`{"doc": 7}`), 3, 2, "sql-1"
		id := s.cfg.EnqueueSQL(t, f.d, p)
		j := f.wantState(id, queue.StatePending)
		if j.Queue != p.Queue || j.Kind != p.Kind || j.TenantID != p.TenantID || j.Priority != 3 ||
			j.MaxAttempts != 2 || j.UniqueKey != "sql-1" || j.Attempt != 0 {
			t.Fatalf("SQL-enqueued job %+v, want the params %+v", j, p)
		}
		sameJSON(t, "Args", j.Args, p.Args)
		if again := s.cfg.EnqueueSQL(t, f.d, p); again != id {
			t.Fatalf("same unique key through SQL gave job %d, want the existing %d", again, id)
		}
		if r := f.insert(p)[0]; !r.Duplicate || r.Job.ID != id {
			t.Fatalf("JobInsertMany after the SQL enqueue: %+v, want a duplicate of %d", r, id)
		}
		if c := f.claimOne(); c.ID != id {
			t.Fatalf("claimed %s, want the SQL-enqueued job %d", describe(c), id)
		}
	})
	t.Run("Scheduled", func(t *testing.T) {
		t.Parallel()
		f := s.sqlSetup(t)
		p := params("acme")
		p.RunAt = time.Now().Add(time.Hour)
		id := s.cfg.EnqueueSQL(t, f.d, p)
		near(t, "RunAt", f.wantState(id, queue.StateScheduled).RunAt, p.RunAt)
		f.claimNone()
	})
}

func (s *suite) sqlSetup(t *testing.T) *fixture {
	t.Helper()
	f := s.setup(t)
	if !f.d.Capabilities().SQLEnqueue {
		t.Skip("driver has no SQL enqueue function (Capabilities.SQLEnqueue is false)")
	}
	if s.cfg.EnqueueSQL == nil {
		t.Skip("Config.EnqueueSQL not set: the suite cannot call the driver's SQL function")
	}
	return f
}
