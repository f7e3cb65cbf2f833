package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// MonitorConfig configures a run of the monitoring suite.
type MonitorConfig struct {
	// NewStore returns a fresh, migrated, empty store and the queue driver
	// on the same database, as for RunDocs.
	NewStore func(t *testing.T) (docket.Store, driver.Driver)

	// SetTimes overwrites the times of job id that are set in times (a
	// zero field is left as it is). The store's clock cannot be injected,
	// and the views' ages and durations are only worth checking when they
	// are known: the suite sets them. Required.
	SetTimes func(t *testing.T, d driver.Driver, id int64, times JobTimes)

	// ViewColumns, when set, returns the columns of a view of the store, in
	// order (PostgreSQL: information_schema.columns). The suite checks
	// them against MonitorViews. Without it (a store without SQL views)
	// that check is skipped.
	ViewColumns func(t *testing.T, d driver.Driver, view string) []string
}

// JobTimes are the times of a job that SetTimes can overwrite.
type JobTimes struct {
	CreatedAt, RunAt, StartedAt, CompletedAt, LeaseExpiresAt time.Time
}

// MonitorViews are the monitoring views of a store with SQL views and
// their columns, in order (docs/monitoring.md). queue_health and
// processing_performance are the original specification's names for two
// of them.
var MonitorViews = map[string][]string{
	"docket_queue_health": {"queue", "state", "jobs", "avg_age_seconds", "max_age_seconds"},
	"docket_processing_performance": {"hour", "queue", "completed", "failed", "avg_duration_seconds",
		"p95_duration_seconds", "max_attempts"},
	"docket_stuck_jobs": {"id", "queue", "kind", "tenant_id", "attempt", "max_attempts", "worker_id",
		"started_at", "lease_expires_at", "running_seconds", "reason"},
	"docket_failed_jobs": {"id", "queue", "kind", "tenant_id", "attempt", "max_attempts",
		"attempts_exhausted", "error_message", "created_at", "completed_at"},
	"docket_queue_depth": {"queue", "tenant_id", "pending", "running", "oldest_pending_age_seconds"},
	"queue_health":       {"queue", "state", "jobs", "avg_age_seconds", "max_age_seconds"},
	"processing_performance": {"hour", "queue", "completed", "failed", "avg_duration_seconds",
		"p95_duration_seconds", "max_attempts"},
}

// RunMonitor runs the monitoring suite: docket.Monitor.HealthGet against
// known states of the store (counts, ages, durations, percentiles, the
// lists' order, limits and totals, the queue filter) and, where the store
// has them, the columns of its SQL views.
func RunMonitor(t *testing.T, cfg MonitorConfig) {
	t.Helper()
	if cfg.NewStore == nil || cfg.SetTimes == nil {
		t.Fatal("storetest: MonitorConfig.NewStore and SetTimes are required")
	}
	checks := []struct {
		name string
		fn   func(m *monitorFixture)
	}{
		{"ViewColumns", checkViewColumns},
		{"Empty", checkHealthEmpty},
		{"QueueHealth", checkQueueHealth},
		{"Performance", checkPerformance},
		{"StuckJobs", checkStuckJobs},
		{"FailedJobs", checkFailedJobs},
		{"QueueDepth", checkQueueDepth},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			store, d := cfg.NewStore(t)
			if store == nil || d == nil {
				t.Fatal("NewStore returned nil")
			}
			c.fn(&monitorFixture{
				fixture: &fixture{t: t, ctx: t.Context(), d: d, x: d.Executor()},
				store:   store, cfg: cfg, start: time.Now(),
			})
		})
	}
}

// monitorFixture is a fresh store, the hooks, and when the subtest began.
type monitorFixture struct {
	*fixture
	store docket.Store
	cfg   MonitorConfig
	start time.Time
}

// health reads the views.
func (m *monitorFixture) health(p *docket.HealthParams) *docket.Health {
	m.t.Helper()
	h, err := m.store.HealthGet(m.ctx, p)
	if err != nil {
		m.t.Fatalf("HealthGet(%+v): %v", p, err)
	}
	return h
}

// setTimes sets times of a job, through the hook.
func (m *monitorFixture) setTimes(id int64, times JobTimes) {
	m.t.Helper()
	m.cfg.SetTimes(m.t, m.d, id, times)
}

// ago is now minus d, at the stores' precision.
func ago(d time.Duration) time.Time { return time.Now().Add(-d).Truncate(time.Microsecond) }

// wantAge checks an age the test set to want ago: at least want (less the
// clock slack between test and store) and at most want plus the subtest's
// time so far (plus the slack).
func (m *monitorFixture) wantAge(what string, got, want time.Duration) {
	m.t.Helper()
	lo, hi := want-clockSlack, want+time.Since(m.start)+clockSlack
	if got < lo || got > hi {
		m.t.Errorf("%s = %v, want %v (within %v..%v)", what, got, want, lo, hi)
	}
}

// claimTenants enqueues one job of each tenant in testQueue with
// maxAttempts and claims them all (one per tenant).
func (m *monitorFixture) claimTenants(maxAttempts int, tenants ...string) map[string]*queue.Job {
	m.t.Helper()
	for _, tn := range tenants {
		p := params(tn)
		p.MaxAttempts = maxAttempts
		m.insert(p)
	}
	jobs := m.claim(testQueue, len(tenants), longLease)
	if len(jobs) != len(tenants) {
		m.t.Fatalf("claimed %d jobs of %d tenants, want one each", len(jobs), len(tenants))
	}
	out := make(map[string]*queue.Job, len(jobs))
	for _, j := range jobs {
		out[j.TenantID] = j
	}
	return out
}

// claimAgain claims job id of testQueue, pending again. A claim may come
// back empty while it marks idle tenants it visited first (those of jobs
// that ended): it is repeated, a bounded number of times.
func (m *monitorFixture) claimAgain(id int64) *queue.Job {
	m.t.Helper()
	for range 100 {
		jobs := m.claim(testQueue, 100, longLease)
		if len(jobs) == 0 {
			continue
		}
		if len(jobs) != 1 || jobs[0].ID != id {
			m.t.Fatalf("claimed %d jobs (first %d), want only %d", len(jobs), jobs[0].ID, id)
		}
		return jobs[0]
	}
	m.t.Fatalf("job %d: not claimed in 100 claims", id)
	return nil
}

// end finishes a running job with an outcome.
func (m *monitorFixture) end(j *queue.Job, outcome queue.Outcome, msg string) {
	m.t.Helper()
	err := m.finish(&driver.JobFinishParams{Lease: j.Lease(), Outcome: outcome, Error: msg, WorkerID: workerID})
	if err != nil {
		m.t.Fatalf("finish job %d (%s): %v", j.ID, outcome, err)
	}
}

func checkViewColumns(m *monitorFixture) {
	if m.cfg.ViewColumns == nil {
		m.t.Skip("the store has no SQL views (MonitorConfig.ViewColumns is nil); HealthGet's columns are its Go types")
	}
	for view, want := range MonitorViews {
		got := m.cfg.ViewColumns(m.t, m.d, view)
		if !slices.Equal(got, want) {
			m.t.Errorf("view %s: columns %q, want %q", view, got, want)
		}
	}
}

func checkHealthEmpty(m *monitorFixture) {
	h := m.health(nil)
	if len(h.Queues)+len(h.Performance)+len(h.Stuck)+len(h.Failed)+len(h.Depth) != 0 ||
		h.StuckTotal+h.FailedTotal+h.DepthTotal != 0 {
		m.t.Errorf("HealthGet on an empty store = %+v, want nothing", h)
	}
}
