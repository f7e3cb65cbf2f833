package drivertest_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/drivertest"
)

// TestConformance runs the suite against memDriver, a small in-memory
// reference implementation of the contract. It checks the suite itself:
// a test that fails here misreads the contract or is flaky.
func TestConformance(t *testing.T) {
	drivertest.RunConfig(t, drivertest.Config{
		NewDriver: func(t *testing.T) driver.Driver { return newMemDriver() },
		BeginNative: func(t *testing.T, d driver.Driver) drivertest.NativeTx {
			tx := d.(*memDriver).begin()
			return drivertest.NativeTx{
				Tx:       tx,
				Commit:   func() error { return tx.end(true) },
				Rollback: func() error { return tx.end(false) },
			}
		},
	})
}

// memDriver keeps one store in memory. Writes are serialised by writer,
// which a transaction holds from Begin to its end; reads only take mu.
type memDriver struct {
	writer sync.Mutex
	mu     sync.Mutex
	st     *memState

	subMu sync.Mutex
	subs  map[int]func(topic, payload string)
	subID int
}

type tenantQueue struct{ tenant, queue string }

type memLeader struct {
	id      string
	expires time.Time
}

type memState struct {
	nextID        int64
	jobs          map[int64]*queue.Job
	attempts      map[int64][]*queue.Attempt
	tenantLimits  map[tenantQueue]int // queue "" for every queue
	queueLimits   map[string]int
	served        map[tenantQueue]int64
	vtime         map[tenantQueue]float64 // virtual time: cost taken over weight
	ready         map[tenantQueue]bool    // had a pending job after the last claim
	weights       map[string]int
	serveSeq      int64
	leaders       map[string]memLeader
	pausedQueues  map[string]time.Time
	pausedTenants map[string]time.Time
	periodic      map[string]queue.PeriodicRecord // memperiodic_test.go; nil until used
	holds         map[queue.Lease]memHold         // slots held by cancelled attempts; nil until used
	open          map[int64]int                   // per workflow parent, its unfinished children
}

// memHold is a slot a cancelled attempt holds until released or expires.
type memHold struct {
	tenant, queue string
	expires       time.Time
}

var (
	_ driver.Driver     = (*memDriver)(nil)
	_ driver.ExecutorTx = (*memTx)(nil)
)

func newMemDriver() *memDriver {
	return &memDriver{
		subs: make(map[int]func(string, string)),
		st: &memState{
			jobs: make(map[int64]*queue.Job), attempts: make(map[int64][]*queue.Attempt),
			tenantLimits: make(map[tenantQueue]int), queueLimits: make(map[string]int),
			served: make(map[tenantQueue]int64), leaders: make(map[string]memLeader),
			vtime: make(map[tenantQueue]float64), ready: make(map[tenantQueue]bool), weights: make(map[string]int),
			pausedQueues: make(map[string]time.Time), pausedTenants: make(map[string]time.Time),
			open: make(map[int64]int),
		},
	}
}

func (s *memState) clone() *memState {
	c := *s
	c.jobs = make(map[int64]*queue.Job, len(s.jobs))
	for id, j := range s.jobs {
		cp := *j
		c.jobs[id] = &cp
	}
	c.attempts = make(map[int64][]*queue.Attempt, len(s.attempts))
	for id, as := range s.attempts {
		c.attempts[id] = append([]*queue.Attempt(nil), as...)
	}
	c.tenantLimits, c.queueLimits = maps.Clone(s.tenantLimits), maps.Clone(s.queueLimits)
	c.served, c.leaders = maps.Clone(s.served), maps.Clone(s.leaders)
	c.vtime, c.ready, c.weights = maps.Clone(s.vtime), maps.Clone(s.ready), maps.Clone(s.weights)
	c.pausedQueues, c.pausedTenants = maps.Clone(s.pausedQueues), maps.Clone(s.pausedTenants)
	c.periodic, c.holds, c.open = maps.Clone(s.periodic), maps.Clone(s.holds), maps.Clone(s.open)
	return &c
}

func (d *memDriver) Executor() driver.Executor { return &memExec{d: d} }

func (d *memDriver) UnwrapTx(tx any) (driver.Executor, error) {
	if t, ok := tx.(*memTx); ok && t != nil {
		return t, nil
	}
	return nil, fmt.Errorf("%w: %T is not a memory transaction", queue.ErrInvalid, tx)
}

func (d *memDriver) Notifier() driver.Notifier { return d }

func (d *memDriver) Capabilities() driver.Capabilities { return driver.Capabilities{Notify: true} }

func (d *memDriver) Migrate(context.Context) error { return nil }

func (d *memDriver) Close() error { return nil }

func (d *memDriver) Listen(ctx context.Context, topics []string, fn func(topic, payload string)) error {
	want := make(map[string]bool)
	for _, t := range topics {
		want[t] = true
	}
	d.subMu.Lock()
	d.subID++
	id := d.subID
	d.subs[id] = func(topic, payload string) {
		if want[topic] {
			fn(topic, payload)
		}
	}
	d.subMu.Unlock()
	<-ctx.Done()
	d.subMu.Lock()
	delete(d.subs, id)
	d.subMu.Unlock()
	return nil
}

func (d *memDriver) publish(notes map[[2]string]bool) {
	d.subMu.Lock()
	defer d.subMu.Unlock()
	for n := range notes {
		for _, fn := range d.subs {
			fn(n[0], n[1])
		}
	}
}

// memExec runs each operation in its own transaction, or in tx.
type memExec struct {
	d  *memDriver
	tx *memTx
}

// memTx is a transaction: a private copy of the state, installed on commit.
type memTx struct {
	memExec
	st    *memState
	notes map[[2]string]bool
	done  bool
}

func (d *memDriver) begin() *memTx {
	d.writer.Lock()
	d.mu.Lock()
	defer d.mu.Unlock()
	tx := &memTx{st: d.st.clone(), notes: make(map[[2]string]bool)}
	tx.memExec = memExec{d: d, tx: tx}
	return tx
}

func (x *memExec) Begin(context.Context) (driver.ExecutorTx, error) {
	if x.tx != nil {
		return nil, fmt.Errorf("%w: nested transaction", queue.ErrInvalid)
	}
	return x.d.begin(), nil
}

func (t *memTx) Commit(context.Context) error   { return t.end(true) }
func (t *memTx) Rollback(context.Context) error { return t.end(false) }

func (t *memTx) end(commit bool) error {
	if t.done {
		return fmt.Errorf("transaction already ended")
	}
	t.done = true
	if commit {
		t.d.mu.Lock()
		t.d.st = t.st
		t.d.mu.Unlock()
	}
	t.d.writer.Unlock()
	if commit {
		t.d.publish(t.notes)
	}
	return nil
}

func (t *memTx) notify(topic, q string) { t.notes[[2]string{topic, q}] = true }

// stateOp changes the state; notify queues a notification for commit.
type stateOp func(st *memState, notify func(topic, queue string)) error

func (x *memExec) write(fn stateOp) error {
	if x.tx != nil {
		return fn(x.tx.st, x.tx.notify)
	}
	tx := x.d.begin()
	if err := fn(tx.st, tx.notify); err != nil {
		_ = tx.end(false)
		return err
	}
	return tx.end(true)
}

func (x *memExec) read(fn func(st *memState) error) error {
	if x.tx != nil {
		return fn(x.tx.st)
	}
	x.d.mu.Lock()
	defer x.d.mu.Unlock()
	return fn(x.d.st)
}

// limit is a tenant's concurrency limit in a queue.
func (s *memState) limit(tenant, q string) int {
	if n, ok := s.tenantLimits[tenantQueue{tenant, q}]; ok {
		return n
	}
	if n, ok := s.tenantLimits[tenantQueue{tenant, ""}]; ok {
		return n
	}
	if n, ok := s.queueLimits[q]; ok {
		return n
	}
	return 1
}

func (s *memState) running(tenant, q string) int {
	n := 0
	for _, j := range s.jobs {
		if j.TenantID == tenant && j.Queue == q && j.State == queue.StateRunning {
			n++
		}
	}
	for _, h := range s.holds {
		if h.tenant == tenant && h.queue == q {
			n++
		}
	}
	return n
}

// held returns the running job a lease names, or nil.
func (s *memState) held(l queue.Lease) *queue.Job {
	j := s.jobs[l.JobID]
	if j == nil || j.State != queue.StateRunning || j.Attempt != l.Attempt || j.LeaseToken != l.Token {
		return nil
	}
	return j
}

// endAttempt records an attempt of j and clears its lease.
func (s *memState) endAttempt(j *queue.Job, outcome queue.Outcome, errMsg, worker string, now time.Time) {
	if worker == "" {
		worker = j.WorkerID
	}
	s.attempts[j.ID] = append(s.attempts[j.ID], &queue.Attempt{
		JobID: j.ID, Attempt: j.Attempt, WorkerID: worker, StartedAt: j.StartedAt,
		FinishedAt: now, Outcome: outcome, Error: errMsg,
	})
	j.LeaseToken, j.LeaseExpiresAt, j.UpdatedAt = 0, time.Time{}, now
}

func newToken() int64 {
	for {
		if t := rand.Int64(); t != 0 {
			return t
		}
	}
}

func copyJob(j *queue.Job) *queue.Job {
	c := *j
	c.Metadata = maps.Clone(j.Metadata)
	return &c
}

// weight is a tenant's weight in the fair shares.
func (s *memState) weight(tenant string) int {
	if w := s.weights[tenant]; w > 0 {
		return w
	}
	return 1
}
