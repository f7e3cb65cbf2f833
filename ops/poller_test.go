package ops_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/ops"
	"github.com/docketq/docket/queue"
)

// TestPoller: the store's gauges after a read, the tenant series bounded
// to the top N, and docket_store_up 0 once the store fails.
func TestPoller(t *testing.T) {
	t.Parallel()
	d, c := setup(t)
	ctx := t.Context()
	for tenant, n := range map[string]int{"deep": 3, "mid": 2, "shallow": 1} {
		for range n {
			if _, err := c.Enqueue(ctx, &queue.EnqueueParams{Queue: "q", Kind: "k", TenantID: tenant}); err != nil {
				t.Fatal(err)
			}
		}
	}
	m := ops.NewMetrics()
	p := ops.NewPoller(m, ops.PollerConfig{
		Monitor: d, Client: c, StatsQueue: "q", TopTenants: 2,
		NotifyUsage: func(context.Context) (float64, error) { return 0.25, nil },
		Pools:       func() map[string]ops.PoolStats { return map[string]ops.PoolStats{"main": {InUse: 3, Idle: 1, Max: 8}} },
		Wraparound: func(context.Context) (docket.Wraparound, error) {
			return docket.Wraparound{Database: "docket", DatabaseAge: 1000, OldestDatabase: "template0", OldestDatabaseAge: 3000,
				Slot: "standby", SlotAge: 700, PreparedGID: "g", PreparedAge: 50}, nil
		},
	})
	p.Poll(ctx)
	h := ops.Handler(ops.HandlerConfig{Gatherer: m.Registry()})
	fams := scrape(t, h)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"docket_store_up", nil, 1},
		{"docket_queue_jobs", map[string]string{"queue": "q", "state": "pending"}, 6},
		{"docket_tenant_backlog_jobs", map[string]string{"queue": "q", "tenant": "deep"}, 3},
		{"docket_tenant_backlog_jobs", map[string]string{"queue": "q", "tenant": "mid"}, 2},
		{"docket_tenants_with_work", nil, 3},
		{"docket_stuck_jobs", nil, 0},
		{"docket_failed_jobs", nil, 0},
		{"docket_db_notify_queue_usage_ratio", nil, 0.25},
		{"docket_db_pool_connections", map[string]string{"pool": "main", "state": "in_use"}, 3},
		{"docket_db_pool_connections", map[string]string{"pool": "main", "state": "max"}, 8},
		{"docket_db_xid_age", map[string]string{"database": "docket"}, 1000},
		{"docket_db_xid_age", map[string]string{"database": "template0"}, 3000},
		{"docket_db_replication_slot_xmin_age", nil, 700},
		{"docket_db_prepared_xact_xid_age", nil, 50},
		{"docket_db_max_prepared_transactions", nil, 0},
	} {
		if got, found := value(fams, c.name, c.labels); !found || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.name, c.labels, got, found, c.want)
		}
	}
	if n := len(fams["docket_tenant_backlog_jobs"].GetMetric()); n != 2 {
		t.Errorf("docket_tenant_backlog_jobs has %d series, want the top 2", n)
	}
	for _, name := range []string{"docket_db_dead_tuples", "docket_db_oldest_transaction_age_seconds", "docket_queue_oldest_pending_age_seconds"} {
		if fams[name] == nil {
			t.Errorf("%s missing", name)
		}
	}
	_ = d.Close()
	p.Poll(ctx)
	if got, _ := value(scrape(t, h), "docket_store_up", nil); got != 0 {
		t.Errorf("docket_store_up with the store closed = %v, want 0", got)
	}
}

// TestPoller_SQLite: without the PostgreSQL-only reads (SQLite), their
// gauges are absent.
func TestPoller_SQLite(t *testing.T) {
	t.Parallel()
	d, c := setup(t)
	m := ops.NewMetrics()
	ops.NewPoller(m, ops.PollerConfig{Monitor: d, Client: c, StatsQueue: "q"}).Poll(t.Context())
	fams := scrape(t, ops.Handler(ops.HandlerConfig{Gatherer: m.Registry()}))
	if got, _ := value(fams, "docket_store_up", nil); got != 1 {
		t.Errorf("docket_store_up = %v, want 1", got)
	}
	for _, name := range []string{"docket_db_notify_queue_usage_ratio", "docket_db_xid_age", "docket_db_replication_slot_xmin_age",
		"docket_db_prepared_xact_xid_age", "docket_db_max_prepared_transactions"} {
		if fams[name] != nil {
			t.Errorf("%s present without PostgreSQL", name)
		}
	}
}

// TestHandler_Health: /healthz answers while the process runs; /readyz
// follows Ready.
func TestHandler_Health(t *testing.T) {
	t.Parallel()
	var failing bool
	h := ops.Handler(ops.HandlerConfig{Gatherer: ops.NewMetrics().Registry(), Ready: func(context.Context) error {
		if failing {
			return errors.New("store down")
		}
		return nil
	}})
	get := func(path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), "GET", path, nil))
		return rec.Code
	}
	if got := get("/healthz"); got != http.StatusOK {
		t.Errorf("/healthz: %d", got)
	}
	if got := get("/readyz"); got != http.StatusOK {
		t.Errorf("/readyz: %d", got)
	}
	failing = true
	if got := get("/readyz"); got != http.StatusServiceUnavailable {
		t.Errorf("/readyz with Ready failing: %d, want 503", got)
	}
	if got := get("/healthz"); got != http.StatusOK {
		t.Errorf("/healthz with Ready failing: %d, want 200", got)
	}
}

// TestMetrics_LeaseLost: a running job cancelled from outside loses its
// lease, counted by queue and kind.
func TestMetrics_LeaseLost(t *testing.T) {
	t.Parallel()
	d, c := setup(t)
	m := ops.NewMetrics()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	started := make(chan int64, 1)
	w, err := queue.NewWorker(c, queue.WorkerConfig{
		Queues: map[string]queue.QueueConfig{"q": {MaxWorkers: 1}},
		Handlers: map[string]queue.HandlerConfig{"block": {Handler: queue.HandlerFunc(func(ctx context.Context, t *queue.Task) error {
			started <- t.Job.ID
			<-ctx.Done()
			return ctx.Err()
		})}},
		HeartbeatInterval: 20 * time.Millisecond,
		Hooks:             m.Hooks(queue.Hooks{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	if _, err := c.Enqueue(ctx, &queue.EnqueueParams{Queue: "q", Kind: "block", TenantID: "a"}); err != nil {
		t.Fatal(err)
	}
	id := <-started
	// Another client, as another process would: the worker learns of the
	// cancel from its next heartbeat, not from its own client's events.
	if _, err := queue.NewClient(d, queue.ClientConfig{}).Cancel(ctx, id, ""); err != nil {
		t.Fatal(err)
	}
	h := ops.Handler(ops.HandlerConfig{Gatherer: m.Registry()})
	eventually(t, "a lease loss", func() bool {
		n, _ := value(scrape(t, h), "docket_lease_losses_total", map[string]string{"queue": "q", "kind": "block"})
		return n == 1
	})
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("worker: %v", err)
	}
}
