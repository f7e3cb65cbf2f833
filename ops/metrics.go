package ops

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/docketq/docket/queue"
)

// Metrics are the engine's metrics, registered on their own registry with
// the Go and process collectors. Build them with NewMetrics.
type Metrics struct {
	reg *prometheus.Registry

	enqueued  *prometheus.CounterVec   // queue, kind
	claimed   *prometheus.CounterVec   // queue, kind
	finished  *prometheus.CounterVec   // queue, kind, outcome
	rescued   *prometheus.CounterVec   // queue, kind
	leaseLost *prometheus.CounterVec   // queue, kind
	duration  *prometheus.HistogramVec // queue, kind
	wait      *prometheus.HistogramVec // queue, kind

	mu      sync.Mutex
	running map[int64]attempt // by job id: claimed here, not finished yet
}

// attempt is a running attempt as a claim left it.
type attempt struct {
	queue, kind string
	claimed     time.Time
}

// jobBuckets are the buckets of job durations and waits, in seconds: 10 ms
// to about 45 min.
var jobBuckets = prometheus.ExponentialBuckets(0.01, 2.5, 14)

// NewMetrics returns the engine's metrics on a new registry.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), running: make(map[int64]attempt)}
	f := factory{m.reg}
	byKind := []string{"queue", "kind"}
	m.enqueued = f.counter("docket_jobs_enqueued_total", "Jobs enqueued through this process's client.", byKind)
	m.claimed = f.counter("docket_jobs_claimed_total", "Attempts started by this process's workers.", byKind)
	m.finished = f.counter("docket_jobs_finished_total",
		"Attempts ended by this process's workers, by outcome: completed, failed, retry, snoozed, released, cancelled.",
		[]string{"queue", "kind", "outcome"})
	m.rescued = f.counter("docket_jobs_rescued_total", "Attempts whose lease expired, rescued by this process's sweep (back to pending, or failed).", byKind)
	m.leaseLost = f.counter("docket_lease_losses_total", "Leases this process's workers held and lost (expired and rescued, or cancelled).", byKind)
	m.duration = f.histogram("docket_job_duration_seconds", "Run time of an attempt, from its claim to its end, in this process.", byKind)
	m.wait = f.histogram("docket_job_wait_seconds", "Enqueue to start: from when a job was due (created, or its run_at) to the start of its attempt, by the store's clock.", byKind)
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is where every metric of the process is registered: the ops
// listener serves it.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Hooks returns worker hooks that record claims, finishes and lease
// losses, then call next's.
func (m *Metrics) Hooks(next queue.Hooks) queue.Hooks {
	h := next
	h.Claimed = func(jobs []*queue.Job) {
		m.onClaimed(jobs)
		if next.Claimed != nil {
			next.Claimed(jobs)
		}
	}
	h.Finished = func(job *queue.Job, outcome queue.Outcome, err error) {
		m.onFinished(job, outcome)
		if next.Finished != nil {
			next.Finished(job, outcome, err)
		}
	}
	h.LeaseLost = func(l queue.Lease) {
		m.onLeaseLost(l)
		if next.LeaseLost != nil {
			next.LeaseLost(l)
		}
	}
	return h
}

func (m *Metrics) onClaimed(jobs []*queue.Job) {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, j := range jobs {
		m.claimed.WithLabelValues(j.Queue, j.Kind).Inc()
		if !j.StartedAt.IsZero() && !j.RunAt.IsZero() {
			m.wait.WithLabelValues(j.Queue, j.Kind).Observe(max(j.StartedAt.Sub(j.RunAt).Seconds(), 0))
		}
		m.running[j.ID] = attempt{queue: j.Queue, kind: j.Kind, claimed: now}
	}
}

func (m *Metrics) onFinished(job *queue.Job, outcome queue.Outcome) {
	m.finished.WithLabelValues(job.Queue, job.Kind, string(outcome)).Inc()
	m.mu.Lock()
	a, ok := m.running[job.ID]
	delete(m.running, job.ID)
	m.mu.Unlock()
	if ok {
		m.duration.WithLabelValues(job.Queue, job.Kind).Observe(time.Since(a.claimed).Seconds())
	}
}

func (m *Metrics) onLeaseLost(l queue.Lease) {
	m.mu.Lock()
	a, ok := m.running[l.JobID]
	m.mu.Unlock()
	if ok {
		m.leaseLost.WithLabelValues(a.queue, a.kind).Inc()
	} else {
		m.leaseLost.WithLabelValues("", "").Inc()
	}
}

// Watch subscribes to bus at once and returns the function that counts
// its enqueues and rescues until ctx ends. Like every bus subscriber it may
// miss events when it falls behind (queue.Bus.Dropped counts them).
func (m *Metrics) Watch(bus *queue.Bus) (run func(ctx context.Context) error) {
	events, stop := bus.Subscribe(1024, nil, queue.EventInserted, queue.EventRescued)
	return func(ctx context.Context) error {
		defer stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case e := <-events:
				switch e.Type {
				case queue.EventInserted:
					m.enqueued.WithLabelValues(e.Job.Queue, e.Job.Kind).Inc()
				case queue.EventRescued:
					m.rescued.WithLabelValues(e.Job.Queue, e.Job.Kind).Inc()
				}
			}
		}
	}
}

// factory registers metrics on one registry.
type factory struct{ reg prometheus.Registerer }

func (f factory) counter(name, help string, labels []string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	f.reg.MustRegister(c)
	return c
}

func (f factory) histogram(name, help string, labels []string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: jobBuckets}, labels)
	f.reg.MustRegister(h)
	return h
}

func (f factory) gauge(name, help string, labels []string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	f.reg.MustRegister(g)
	return g
}
