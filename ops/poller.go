package ops

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

// Defaults of PollerConfig.
const (
	DefaultPollInterval = 15 * time.Second
	DefaultTopTenants   = 10
	pollTimeout         = 10 * time.Second
)

// PollerConfig configures a Poller.
type PollerConfig struct {
	// Monitor reads the monitoring views. Required.
	Monitor docket.Monitor
	// Client reads the store's health (dead tuples, vacuum horizon) of
	// StatsQueue. Required.
	Client     *queue.Client
	StatsQueue string
	// NotifyUsage, when set, returns the fraction of PostgreSQL's
	// LISTEN/NOTIFY queue in use (pg_notification_queue_usage()).
	NotifyUsage func(ctx context.Context) (float64, error)
	// Wraparound, when set, reads the transaction-id ages
	// (pgstore.Store.Wraparound; PostgreSQL only).
	Wraparound func(ctx context.Context) (docket.Wraparound, error)
	// Pools, when set, returns the connection pools' use, by pool name.
	Pools func() map[string]PoolStats
	// Interval between reads. Default DefaultPollInterval.
	Interval time.Duration
	// TopTenants is how many tenants, deepest backlog first, get a series
	// of their own in docket_tenant_backlog_jobs. Default
	// DefaultTopTenants; at most docket.MaxHealthLimit.
	TopTenants int
	// Logger receives failed reads. Nil discards them.
	Logger *slog.Logger
}

// PoolStats is a connection pool's use.
type PoolStats struct {
	InUse, Idle, Max int
}

// Poller reads the store's gauges at an interval and keeps them for
// scrapes. Build it with NewPoller and call Run.
type Poller struct {
	cfg PollerConfig

	up, lastSuccess                    prometheus.Gauge
	jobs, oldestPending, tenantBacklog *prometheus.GaugeVec
	stuck, failed, tenantsWithWork     prometheus.Gauge
	deadTuples, xactAge, notifyUsage   prometheus.Gauge
	pool                               *prometheus.GaugeVec
	xidAge                             *prometheus.GaugeVec
	slotXIDAge, preparedXIDAge         prometheus.Gauge
	maxPrepared                        prometheus.Gauge
}

// NewPoller registers the store's gauges on m's registry.
func NewPoller(m *Metrics, cfg PollerConfig) *Poller {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultPollInterval
	}
	if cfg.TopTenants <= 0 {
		cfg.TopTenants = DefaultTopTenants
	}
	cfg.TopTenants = min(cfg.TopTenants, docket.MaxHealthLimit)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	f := factory{m.reg}
	one := func(name, help string) prometheus.Gauge {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
		m.reg.MustRegister(g)
		return g
	}
	p := &Poller{cfg: cfg}
	p.up = one("docket_store_up", "Whether the last read of the store's gauges succeeded.")
	p.lastSuccess = one("docket_store_last_read_timestamp_seconds", "When the store's gauges were last read successfully (unix time).")
	p.jobs = f.gauge("docket_queue_jobs", "Scheduled, pending and running jobs by queue and state (docket_queue_health; finished states are counters: docket_jobs_finished_total).", []string{"queue", "state"})
	p.oldestPending = f.gauge("docket_queue_oldest_pending_age_seconds", "How long the oldest pending job of a queue has waited.", []string{"queue"})
	p.tenantBacklog = f.gauge("docket_tenant_backlog_jobs",
		"Pending jobs of the tenants with the deepest backlogs (top N only; docket_queue_depth).", []string{"queue", "tenant"})
	p.tenantsWithWork = one("docket_tenants_with_work", "(queue, tenant) pairs with pending or running jobs.")
	p.stuck = one("docket_stuck_jobs", "Running jobs with an expired lease or running over 30 minutes (docket_stuck_jobs).")
	p.failed = one("docket_failed_jobs", "Failed jobs no job retries yet (docket_failed_jobs).")
	p.deadTuples = one("docket_db_dead_tuples", "Dead rows of the jobs table (PostgreSQL) or free pages of the database file (SQLite).")
	p.xactAge = one("docket_db_oldest_transaction_age_seconds", "Age of the oldest open transaction, which holds back vacuum (PostgreSQL; 0 on SQLite).")
	if cfg.NotifyUsage != nil {
		p.notifyUsage = one("docket_db_notify_queue_usage_ratio", "Fraction of PostgreSQL's LISTEN/NOTIFY queue in use (pg_notification_queue_usage()).")
	}
	if cfg.Wraparound != nil {
		p.xidAge = f.gauge("docket_db_xid_age",
			"age(datfrozenxid) in transaction ids of the current database and of the cluster's oldest (PostgreSQL only; wraparound at 2^31).", []string{"database"})
		p.slotXIDAge = one("docket_db_replication_slot_xmin_age", "Age in transaction ids of the oldest xmin or catalog_xmin a replication slot holds; 0 when none (PostgreSQL only).")
		p.preparedXIDAge = one("docket_db_prepared_xact_xid_age", "Age in transaction ids of the oldest prepared transaction; 0 when none (PostgreSQL only).")
		p.maxPrepared = one("docket_db_max_prepared_transactions", "The server's max_prepared_transactions; Docket wants 0 (PostgreSQL only).")
	}
	if cfg.Pools != nil {
		p.pool = f.gauge("docket_db_pool_connections", "Connections of a pool by state: in_use, idle, max.", []string{"pool", "state"})
	}
	return p
}

// Run reads the gauges now and then at every interval until ctx ends.
func (p *Poller) Run(ctx context.Context) error {
	t := time.NewTicker(p.cfg.Interval)
	defer t.Stop()
	for {
		p.Poll(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Poll reads the gauges once. A failed read sets docket_store_up to 0 and
// leaves the last values.
func (p *Poller) Poll(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, pollTimeout)
	defer cancel()
	if p.pool != nil {
		for name, s := range p.cfg.Pools() {
			p.pool.WithLabelValues(name, "in_use").Set(float64(s.InUse))
			p.pool.WithLabelValues(name, "idle").Set(float64(s.Idle))
			p.pool.WithLabelValues(name, "max").Set(float64(s.Max))
		}
	}
	if err := p.read(ctx); err != nil {
		p.cfg.Logger.Warn("metrics: read the store's gauges", "error", err)
		p.up.Set(0)
		return
	}
	p.up.Set(1)
	p.lastSuccess.SetToCurrentTime()
}

func (p *Poller) read(ctx context.Context) error {
	h, err := p.cfg.Monitor.HealthGet(ctx, &docket.HealthParams{Limit: p.cfg.TopTenants, SkipPerformance: true, SkipFinished: true})
	if err != nil {
		return err
	}
	st, err := p.cfg.Client.Stats(ctx, p.cfg.StatsQueue)
	if err != nil {
		return err
	}
	var usage float64
	if p.cfg.NotifyUsage != nil {
		if usage, err = p.cfg.NotifyUsage(ctx); err != nil {
			return err
		}
		p.notifyUsage.Set(usage)
	}
	if p.cfg.Wraparound != nil {
		w, err := p.cfg.Wraparound(ctx)
		if err != nil {
			return err
		}
		p.xidAge.Reset()
		p.xidAge.WithLabelValues(w.Database).Set(float64(w.DatabaseAge))
		p.xidAge.WithLabelValues(w.OldestDatabase).Set(float64(w.OldestDatabaseAge))
		p.slotXIDAge.Set(float64(w.SlotAge))
		p.preparedXIDAge.Set(float64(w.PreparedAge))
		p.maxPrepared.Set(float64(w.MaxPreparedTransactions))
	}
	p.jobs.Reset()
	p.oldestPending.Reset()
	for _, r := range h.Queues {
		p.jobs.WithLabelValues(r.Queue, r.State).Set(float64(r.Jobs))
		if r.State == string(queue.StatePending) {
			p.oldestPending.WithLabelValues(r.Queue).Set(r.MaxAge.Seconds())
		}
	}
	p.tenantBacklog.Reset()
	for _, r := range h.Depth {
		p.tenantBacklog.WithLabelValues(r.Queue, r.TenantID).Set(float64(r.Pending))
	}
	p.tenantsWithWork.Set(float64(h.DepthTotal))
	p.stuck.Set(float64(h.StuckTotal))
	p.failed.Set(float64(h.FailedTotal))
	p.deadTuples.Set(float64(st.DeadTuples))
	p.xactAge.Set(st.OldestXactAge.Seconds())
	return nil
}
