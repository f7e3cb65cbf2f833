package drivertest

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// testDifferential is a model-based test: it drives the store through a
// random but seeded sequence of operations (insert, claim, heartbeat,
// progress, finish with every outcome, cancel, rescue, schedule, pause and
// resume of queues and tenants, limit changes, manual retry, position,
// stats, deletion of finished jobs, workflows: spawn of steps, await,
// a step's end waking its parent, cancel cascading to steps, retry
// re-opening a parent) and after every step compares the store with a
// small model of the contract:
//
//   - every job's state, attempt, lease, error, stage and progress are what
//     the operations imply (the whole job list, after every step);
//   - a claim returns only pending jobs of the queue, of unpaused tenants
//     of an unpaused queue, never takes a tenant past its limit, takes a
//     tenant's jobs in priority-then-id order, gives no tenant more than
//     ceil(Max / tenants served), passes over a claimable tenant only for
//     ones served less recently, and says more when it passes one over;
//   - a heartbeat, progress or finish with a lease that is not held is
//     refused (ErrLeaseLost, or left out of the held leases) and changes
//     nothing;
//   - rescue, schedule, retry, cancel and delete move exactly the jobs the
//     model says;
//   - positions, queue stats, pauses and attempt records agree with the
//     model.
//
// Time: leases and retry delays are either long (never due during the test)
// or short; before a rescue, schedule or delete sweep the test waits until
// the store's clock has passed every short deadline, so what a sweep takes
// does not depend on the machine's speed. The only waits are those.
//
// The run is deterministic for a seed (up to the ties the contract leaves
// open, which the model accepts and then follows). Some steps run in a
// transaction of their own that is committed or rolled back. By default it
// runs 3 seeds of 120 steps (1 of 80 with -short); DOCKET_DIFF_SEEDS (a
// count, or a comma-separated list) and DOCKET_DIFF_STEPS make longer runs,
// and DOCKET_DIFF_RELAX=1 looks past the findings of claim_emptied.go.
// A failure logs the run's last operations, to shrink by hand into a case.
func (s *suite) testDifferential(t *testing.T) {
	seeds, steps := diffConfig(t)
	for _, seed := range seeds {
		t.Run("Seed"+strconv.FormatUint(seed, 10), func(t *testing.T) {
			t.Parallel()
			r := newDiffRun(s.setup(t), seed)
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("operations of seed %d (most recent last):\n%s", seed, r.logTail(80))
				}
			})
			for i := range steps {
				r.step = i
				r.randomOp()
				r.check()
				r.markUnsteady()
			}
			r.finalCheck()
			if len(r.notes) > 0 {
				t.Logf("seed %d: %d notes (contract latitude taken):\n%s", seed, len(r.notes), strings.Join(r.notes, "\n"))
			}
		})
	}
}

// diffConfig returns the seeds and the steps per seed.
func diffConfig(t *testing.T) ([]uint64, int) {
	n, steps := 3, 120
	if testing.Short() {
		n, steps = 1, 80
	}
	if v := os.Getenv("DOCKET_DIFF_STEPS"); v != "" {
		if k, err := strconv.Atoi(v); err == nil && k > 0 {
			steps = k
		}
	}
	var seeds []uint64
	if v := os.Getenv("DOCKET_DIFF_SEEDS"); v != "" {
		if strings.Contains(v, ",") {
			for _, f := range strings.Split(v, ",") {
				k, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
				if err != nil {
					t.Fatalf("DOCKET_DIFF_SEEDS: %v", err)
				}
				seeds = append(seeds, k)
			}
			return seeds, steps
		}
		k, err := strconv.Atoi(v)
		if err != nil || k <= 0 {
			t.Fatalf("DOCKET_DIFF_SEEDS %q: want a count or a list", v)
		}
		n = k
	}
	for i := range n {
		seeds = append(seeds, uint64(i+1))
	}
	return seeds, steps
}

const (
	// diffShortLease and diffShortDelay are the lease and retry delay the
	// test lets pass (it waits for the store's clock before a sweep).
	diffShortLease = 5 * time.Millisecond
	diffShortDelay = 5 * time.Millisecond
	// diffLong is a lease or delay that never passes during a run.
	diffLong = time.Hour
)

var (
	diffQueues  = []string{"q1", "q2"}
	diffTenants = []string{"a", "b", "c", "d"}
)

// dJob is the model of one job.
type dJob struct {
	id            int64
	queue, tenant string
	state         queue.State
	priority      int
	attempt       int
	maxAttempts   int
	failOnTimeout bool
	uniqueKey     string
	retryOf       int64
	parent        int64 // the workflow parent that spawned it; 0 for none
	cost          int
	errMsg        string
	stage         string
	progress      int
	lease         queue.Lease // Token 0 unless running
	shortLease    bool        // running with a lease that a sweep finds expired
	// hold is the lease of a cancelled attempt that still holds its
	// tenant's slot (Token 0 when none); holdShort: its lease was short,
	// so a rescue sweep frees it after holdExp.
	hold      queue.Lease
	holdShort bool
	holdExp   time.Time
	soon      bool // scheduled, due after a short wait
	attempts  []attemptWant

	// As the store last reported them, for the waits only.
	leaseExp, runAt, completedAt time.Time
}

func (j *dJob) String() string {
	return fmt.Sprintf("job %d (%s/%s p%d %s attempt %d)", j.id, j.tenant, j.queue, j.priority, j.state, j.attempt)
}

type diffRun struct {
	f    *fixture
	x    driver.Executor // the store's, or a transaction's in opTx
	t    *testing.T
	rng  *rand.Rand
	seed uint64
	step int

	jobs          map[int64]*dJob
	tenantLimits  map[tenantQueueKey]int // queue "" for every queue
	queueLimits   map[string]int
	pausedQueues  map[string]bool
	pausedTenants map[string]bool
	served        map[tenantQueueKey]int     // claim number that last gave the tenant jobs
	vsum          map[tenantQueueKey]float64 // cost given the tenant (weight 1): its virtual time, while steady
	unsteady      map[tenantQueueKey]bool    // went without work (or paused) since the queue's first claim
	queueClaimed  map[string]bool            // the queue had a claim
	claims        int
	leases        []queue.Lease // every lease ever handed out
	keys          int           // unique keys used

	log   []string
	notes []string

	// relaxed (DOCKET_DIFF_RELAX=1) skips the round-robin check and
	// accepts a claim that returned nothing and said more=false with one
	// tenant of one pending job left: the findings of the cases in
	// claim_emptied.go, to look past them for others.
	relaxed bool
}

type tenantQueueKey struct{ tenant, queue string }

func newDiffRun(f *fixture, seed uint64) *diffRun {
	return &diffRun{
		f: f, x: f.x, t: f.t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), seed: seed,
		jobs: map[int64]*dJob{}, tenantLimits: map[tenantQueueKey]int{}, queueLimits: map[string]int{},
		pausedQueues: map[string]bool{}, pausedTenants: map[string]bool{}, served: map[tenantQueueKey]int{},
		vsum: map[tenantQueueKey]float64{}, unsteady: map[tenantQueueKey]bool{}, queueClaimed: map[string]bool{},
		relaxed: os.Getenv("DOCKET_DIFF_RELAX") == "1",
	}
}

func (r *diffRun) logf(format string, args ...any) {
	r.log = append(r.log, fmt.Sprintf("%4d ", r.step)+fmt.Sprintf(format, args...))
}

func (r *diffRun) logTail(n int) string {
	return strings.Join(r.log[max(0, len(r.log)-n):], "\n")
}

func (r *diffRun) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf("step %d: ", r.step)+fmt.Sprintf(format, args...))
}

func (r *diffRun) fatalf(format string, args ...any) {
	r.t.Helper()
	r.t.Fatalf("seed %d step %d: %s", r.seed, r.step, fmt.Sprintf(format, args...))
}

// ---- model queries ----

func (r *diffRun) limit(tenant, q string) int {
	if n, ok := r.tenantLimits[tenantQueueKey{tenant, q}]; ok {
		return n
	}
	if n, ok := r.tenantLimits[tenantQueueKey{tenant, ""}]; ok {
		return n
	}
	if n, ok := r.queueLimits[q]; ok {
		return n
	}
	return 1
}

// sorted returns the model's jobs that match keep, by id.
func (r *diffRun) sorted(keep func(*dJob) bool) []*dJob {
	var out []*dJob
	for _, j := range r.jobs {
		if keep == nil || keep(j) {
			out = append(out, j)
		}
	}
	slices.SortFunc(out, func(a, b *dJob) int { return cmp.Compare(a.id, b.id) })
	return out
}

// running counts the tenant's slots taken in q: running jobs and cancelled
// attempts that hold theirs.
func (r *diffRun) running(tenant, q string) int {
	return len(r.sorted(func(j *dJob) bool {
		return j.tenant == tenant && j.queue == q && (j.state == queue.StateRunning || j.hold.Token != 0)
	}))
}

// pendingInOrder returns a tenant's pending jobs of a queue in start order:
// priority (higher first), then id.
func (r *diffRun) pendingInOrder(tenant, q string) []*dJob {
	out := r.sorted(func(j *dJob) bool { return j.tenant == tenant && j.queue == q && j.state == queue.StatePending })
	slices.SortStableFunc(out, func(a, b *dJob) int { return cmp.Compare(b.priority, a.priority) })
	return out
}

// held returns the running job whose current lease is l, or nil.
func (r *diffRun) held(l queue.Lease) *dJob {
	j := r.jobs[l.JobID]
	if j == nil || j.state != queue.StateRunning || j.lease != l {
		return nil
	}
	return j
}

func (r *diffRun) heldLeases() []queue.Lease {
	var out []queue.Lease
	for _, j := range r.sorted(func(j *dJob) bool { return j.state == queue.StateRunning }) {
		out = append(out, j.lease)
	}
	return out
}

// staleLeases returns leases handed out before that are no longer held.
func (r *diffRun) staleLeases() []queue.Lease {
	var out []queue.Lease
	for _, l := range r.leases {
		if r.held(l) == nil {
			out = append(out, l)
		}
	}
	return out
}

func pick[T any](r *diffRun, xs []T) T {
	return xs[r.rng.IntN(len(xs))]
}

// someLease returns a lease to write with: mostly a held one, else a stale
// or forged one; ok is false when there is none.
func (r *diffRun) someLease() (queue.Lease, bool) {
	held, stale := r.heldLeases(), r.staleLeases()
	switch n := r.rng.IntN(10); {
	case n < 6 && len(held) > 0:
		return pick(r, held), true
	case n < 8 && len(stale) > 0:
		return pick(r, stale), true
	case n < 9 && len(held) > 0:
		l := pick(r, held)
		if r.rng.IntN(2) == 0 {
			l.Token++
		} else {
			l.Attempt--
		}
		return l, true
	case len(held) > 0:
		return pick(r, held), true
	case len(stale) > 0:
		return pick(r, stale), true
	}
	return queue.Lease{}, false
}

// ---- operations ----

func (r *diffRun) randomOp() {
	ops := []struct {
		weight int
		fn     func()
	}{
		{14, r.opInsert},
		{18, r.opClaim},
		{6, r.opHeartbeat},
		{18, r.opFinish},
		{4, r.opProgress},
		{5, r.opCancel},
		{5, r.opRescue},
		{4, r.opSchedule},
		{3, r.opPauseQueue},
		{4, r.opPauseTenant},
		{4, r.opTenantLimit},
		{2, r.opQueueConfig},
		{3, r.opRetry},
		{5, r.opPosition},
		{1, r.opDelete},
		{3, r.opRelease},
		{6, r.opSpawn},
		{4, r.opTx},
	}
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	n := r.rng.IntN(total)
	for _, o := range ops {
		if n < o.weight {
			o.fn()
			return
		}
		n -= o.weight
	}
}

// opTx runs one write in a transaction of its own, then commits it or
// rolls it back (when the model forgets what the write did).
func (r *diffRun) opTx() {
	ops := []func(){r.opInsert, r.opClaim, r.opFinish, r.opCancel, r.opHeartbeat, r.opRescue, r.opRetry, r.opSpawn}
	op := ops[r.rng.IntN(len(ops))]
	commit := r.rng.IntN(3) != 0
	saved := r.snapshot()
	tx, err := r.f.x.Begin(r.f.ctx)
	if err != nil {
		r.fatalf("Begin: %v", err)
	}
	r.logf("begin")
	r.x = tx
	defer func() { r.x = r.f.x }()
	op()
	if commit {
		err = tx.Commit(r.f.ctx)
	} else {
		err = tx.Rollback(r.f.ctx)
		r.restore(saved)
	}
	r.logf("commit=%v -> %v", commit, err)
	if err != nil {
		r.fatalf("end of transaction (commit %v): %v", commit, err)
	}
}

// diffSnapshot is a copy of the model.
type diffSnapshot struct {
	jobs          map[int64]dJob
	tenantLimits  map[tenantQueueKey]int
	queueLimits   map[string]int
	pausedQueues  map[string]bool
	pausedTenants map[string]bool
	served        map[tenantQueueKey]int
	vsum          map[tenantQueueKey]float64
	claims        int
	leases        []queue.Lease
	keys          int
}

func (r *diffRun) snapshot() *diffSnapshot {
	c := &diffSnapshot{
		jobs: map[int64]dJob{}, tenantLimits: maps.Clone(r.tenantLimits), queueLimits: maps.Clone(r.queueLimits),
		pausedQueues: maps.Clone(r.pausedQueues), pausedTenants: maps.Clone(r.pausedTenants),
		served: maps.Clone(r.served), vsum: maps.Clone(r.vsum), claims: r.claims, leases: slices.Clone(r.leases), keys: r.keys,
	}
	for id, j := range r.jobs {
		cp := *j
		cp.attempts = slices.Clone(j.attempts)
		c.jobs[id] = cp
	}
	return c
}

func (r *diffRun) restore(c *diffSnapshot) {
	r.jobs = map[int64]*dJob{}
	for id, j := range c.jobs {
		cp := j
		r.jobs[id] = &cp
	}
	r.tenantLimits, r.queueLimits, r.pausedQueues, r.pausedTenants = c.tenantLimits, c.queueLimits, c.pausedQueues, c.pausedTenants
	r.served, r.claims, r.leases, r.keys = c.served, c.claims, c.leases, c.keys
	r.vsum = c.vsum
}

func (r *diffRun) opInsert() {
	n := 1 + r.rng.IntN(3)
	ps := make([]*driver.JobInsertParams, n)
	descs := make([]string, n)
	for i := range ps {
		p := &driver.JobInsertParams{
			Queue: pick(r, diffQueues), Kind: testKind, TenantID: pick(r, diffTenants),
			Args: []byte(`{}`), Priority: pick(r, []int{-1, 0, 0, 0, 0, 1, 2}), MaxAttempts: 1 + r.rng.IntN(3),
			FailOnTimeout: r.rng.IntN(6) == 0, Cost: pick(r, []int{1, 1, 1, 2, 5}),
		}
		when := "now"
		switch r.rng.IntN(8) {
		case 0:
			p.RunAt, when = time.Now().Add(diffLong), "+1h"
		case 1:
			p.RunAt, when = time.Now().Add(-time.Minute), "-1m"
		}
		if r.rng.IntN(4) == 0 {
			if r.keys > 0 && r.rng.IntN(2) == 0 {
				p.UniqueKey = "k" + strconv.Itoa(1+r.rng.IntN(r.keys))
			} else {
				r.keys++
				p.UniqueKey = "k" + strconv.Itoa(r.keys)
			}
		}
		ps[i] = p
		descs[i] = fmt.Sprintf("{%s/%s p%d c%d max%d fot=%v at=%s key=%q}", p.TenantID, p.Queue, p.Priority, p.Cost, p.MaxAttempts, p.FailOnTimeout, when, p.UniqueKey)
	}
	res, err := r.x.JobInsertMany(r.f.ctx, ps)
	if err != nil {
		r.fatalf("JobInsertMany %v: %v", descs, err)
	}
	if len(res) != n {
		r.fatalf("JobInsertMany: %d results for %d params", len(res), n)
	}
	var got []string
	for i, p := range ps {
		rs := res[i]
		if rs.Job == nil {
			r.fatalf("JobInsertMany: result %d has no job", i)
		}
		var dup *dJob
		if p.UniqueKey != "" {
			for _, j := range r.sorted(nil) {
				if j.tenant == p.TenantID && j.uniqueKey == p.UniqueKey {
					dup = j
				}
			}
		}
		if dup != nil {
			if !rs.Duplicate || rs.Job.ID != dup.id {
				r.fatalf("insert %s: got job %d duplicate=%v, want duplicate of %s", descs[i], rs.Job.ID, rs.Duplicate, dup)
			}
			got = append(got, fmt.Sprintf("dup %d", dup.id))
			continue
		}
		if rs.Duplicate || r.jobs[rs.Job.ID] != nil {
			r.fatalf("insert %s: got job %d duplicate=%v, want a new job", descs[i], rs.Job.ID, rs.Duplicate)
		}
		state := queue.StatePending
		if p.RunAt.After(time.Now()) {
			state = queue.StateScheduled
		}
		j := &dJob{
			id: rs.Job.ID, queue: p.Queue, tenant: p.TenantID, state: state, priority: p.Priority,
			maxAttempts: p.MaxAttempts, failOnTimeout: p.FailOnTimeout, uniqueKey: p.UniqueKey, cost: p.Cost,
		}
		if rs.Job.Cost != p.Cost {
			r.fatalf("insert %s: got job %d of cost %d, want %d", descs[i], rs.Job.ID, rs.Job.Cost, p.Cost)
		}
		r.jobs[j.id] = j
		got = append(got, strconv.FormatInt(j.id, 10))
	}
	r.logf("insert %s -> %s", strings.Join(descs, " "), strings.Join(got, ", "))
}

func (r *diffRun) opClaim() {
	q := pick(r, diffQueues)
	maxN := pick(r, []int{1, 1, 2, 2, 3, 4, 6})
	lease, short := diffLong, r.rng.IntN(4) == 0
	if short {
		lease = diffShortLease
	}
	type tinfo struct {
		pending []*dJob
		running int
		limit   int
		ready   bool
	}
	info := map[string]*tinfo{}
	var ready []string
	for _, tn := range diffTenants {
		ti := &tinfo{pending: r.pendingInOrder(tn, q), running: r.running(tn, q), limit: r.limit(tn, q)}
		ti.ready = !r.pausedQueues[q] && !r.pausedTenants[tn] && len(ti.pending) > 0 && ti.running < ti.limit
		info[tn] = ti
		if ti.ready {
			ready = append(ready, tn)
		}
	}
	jobs, more, err := r.x.JobClaim(r.f.ctx, &driver.JobClaimParams{Queue: q, WorkerID: workerID, Max: maxN, LeaseDuration: lease})
	if err != nil {
		r.fatalf("JobClaim(%s, max %d): %v", q, maxN, err)
	}
	r.claims++
	byTenant := map[string][]*queue.Job{}
	var desc []string
	for _, j := range jobs {
		desc = append(desc, fmt.Sprintf("%d(%s)", j.ID, j.TenantID))
	}
	r.logf("claim %s max %d lease %v -> [%s] more=%v (ready %v)", q, maxN, lease, strings.Join(desc, " "), more, ready)
	if len(jobs) > maxN {
		r.fatalf("claim of max %d returned %d jobs", maxN, len(jobs))
	}
	seen := map[int64]bool{}
	for _, j := range jobs {
		m := r.jobs[j.ID]
		switch {
		case seen[j.ID]:
			r.fatalf("claim returned job %d twice", j.ID)
		case m == nil:
			r.fatalf("claim returned job %d, which the model does not have", j.ID)
		case m.state != queue.StatePending:
			r.fatalf("claim returned %s, which was not pending", m)
		case m.queue != q:
			r.fatalf("claim of queue %s returned %s", q, m)
		case r.pausedQueues[q]:
			r.fatalf("claim of paused queue %s returned %s", q, m)
		case r.pausedTenants[m.tenant]:
			r.fatalf("claim returned %s of paused tenant %s", m, m.tenant)
		case j.State != queue.StateRunning || j.Attempt != m.attempt+1 || j.LeaseToken == 0 ||
			j.WorkerID != workerID || j.Stage != "" || j.Progress != 0 || j.ProgressMessage != "":
			r.fatalf("claim returned %s: want running, attempt %d, a lease, worker %s, no progress", describe(j), m.attempt+1, workerID)
		}
		seen[j.ID] = true
		byTenant[m.tenant] = append(byTenant[m.tenant], j)
	}
	share := 0
	if len(byTenant) > 0 {
		share = (maxN + len(byTenant) - 1) / len(byTenant)
	}
	for tn, got := range byTenant {
		ti := info[tn]
		if ti.running+len(got) > ti.limit {
			r.fatalf("claim took tenant %s in %s to %d running, over its limit %d", tn, q, ti.running+len(got), ti.limit)
		}
		if len(got) > share {
			r.fatalf("claim of max %d gave tenant %s %d jobs while serving %d tenants (at most %d each)", maxN, tn, len(got), len(byTenant), share)
		}
		want := ids(toQueueJobs(ti.pending[:len(got)]))
		gotIDs := ids(got)
		slices.Sort(want)
		slices.Sort(gotIDs)
		if !slices.Equal(gotIDs, want) {
			r.fatalf("claim gave tenant %s jobs %v, want its first %d in priority-then-id order %v (pending in order: %v)",
				tn, gotIDs, len(got), want, ids(toQueueJobs(ti.pending)))
		}
	}
	// Fair order: a claimable tenant left out must not have a lower
	// virtual time than one served; and more must say it was left. Every
	// weight is 1 here, so a tenant's virtual time is the cost it was
	// given, as long as it is steady: it had work at the queue's first
	// claim and never went without since (nor was paused). A tenant that
	// comes back starts at the least virtual time of those with work, a
	// value the model does not follow; deterministic cases of it are
	// conformance JobClaimCost.
	for _, u := range ready {
		if byTenant[u] != nil {
			continue
		}
		for tn := range byTenant {
			if r.relaxed {
				break
			}
			ku, kt := tenantQueueKey{u, q}, tenantQueueKey{tn, q}
			if !r.unsteady[ku] && !r.unsteady[kt] && r.vsum[ku] < r.vsum[kt] {
				r.fatalf("claim of max %d served tenant %s (virtual time %g) and passed over claimable tenant %s (virtual time %g)",
					maxN, tn, r.vsum[kt], u, r.vsum[ku])
			}
		}
		if !more {
			if len(info[u].pending) >= 2 || (len(jobs) == 0 && !r.relaxed) {
				r.fatalf("claim of max %d returned %d jobs and more=false, but claimable tenant %s (%d pending, %d of %d running) was left",
					maxN, len(jobs), u, len(info[u].pending), info[u].running, info[u].limit)
			}
			r.note("claim left tenant %s with one pending job and said more=false", u)
		}
	}
	for _, j := range jobs {
		m := r.jobs[j.ID]
		m.state, m.attempt, m.lease, m.shortLease = queue.StateRunning, j.Attempt, j.Lease(), short
		m.stage, m.progress = "", 0
		m.leaseExp = j.LeaseExpiresAt
		r.leases = append(r.leases, j.Lease())
	}
	for tn, got := range byTenant {
		r.served[tenantQueueKey{tn, q}] = r.claims
		for _, j := range got {
			r.vsum[tenantQueueKey{tn, q}] += float64(r.jobs[j.ID].cost)
		}
	}
	r.queueClaimed[q] = true
}

func toQueueJobs(js []*dJob) []*queue.Job {
	out := make([]*queue.Job, len(js))
	for i, j := range js {
		out[i] = &queue.Job{ID: j.id}
	}
	return out
}

func (r *diffRun) opHeartbeat() {
	var ls []queue.Lease
	used := map[queue.Lease]bool{}
	for range 1 + r.rng.IntN(3) {
		l, ok := r.someLease()
		if ok && !used[l] {
			used[l] = true
			ls = append(ls, l)
		}
	}
	if len(ls) == 0 {
		return
	}
	d, short := diffLong, r.rng.IntN(4) == 0
	if short {
		d = diffShortLease
	}
	got, err := r.x.JobHeartbeat(r.f.ctx, &driver.JobHeartbeatParams{Leases: ls, LeaseDuration: d})
	r.logf("heartbeat %v %v -> %v, %v", ls, d, got, err)
	if err != nil {
		r.fatalf("JobHeartbeat(%v): %v", ls, err)
	}
	var want []queue.Lease
	for _, l := range ls {
		if r.held(l) != nil {
			want = append(want, l)
		}
	}
	key := func(a, b queue.Lease) int { return cmp.Compare(a.JobID, b.JobID) }
	slices.SortFunc(got, key)
	slices.SortFunc(want, key)
	if !slices.Equal(got, want) {
		r.fatalf("heartbeat of %v returned held %v, want %v", ls, got, want)
	}
	for _, l := range want {
		r.jobs[l.JobID].shortLease = short
	}
}

func (r *diffRun) opProgress() {
	l, ok := r.someLease()
	if !ok {
		return
	}
	stage, pct := pick(r, []string{"parsing", "chunking", "zombie"}), r.rng.IntN(101)
	err := r.x.JobProgress(r.f.ctx, &driver.JobProgressParams{Lease: l, Stage: stage, Percent: pct, Message: "m"})
	r.logf("progress %v %s %d -> %v", l, stage, pct, err)
	if j := r.held(l); j != nil {
		if err != nil {
			r.fatalf("JobProgress with the held lease %v of %s: %v", l, j, err)
		}
		j.stage, j.progress = stage, pct
		return
	}
	if !errors.Is(err, queue.ErrLeaseLost) {
		r.fatalf("JobProgress with the lost lease %v (job now %v): %v, want ErrLeaseLost", l, r.jobs[l.JobID], err)
	}
}

func (r *diffRun) opFinish() {
	var ps []*driver.JobFinishParams
	var descs []string
	for range 1 + r.rng.IntN(3) {
		l, ok := r.someLease()
		if !ok {
			break
		}
		p := &driver.JobFinishParams{Lease: l, WorkerID: workerID}
		outcome := r.rng.IntN(10)
		if r.openChildren(l.JobID) > 0 && r.rng.IntN(2) == 0 {
			outcome = 9 // a parent with open steps mostly awaits them
		}
		switch outcome {
		case 0, 1, 2:
			p.Outcome, p.Result = queue.OutcomeCompleted, []byte(`{"ok":true}`)
		case 9:
			p.Outcome = queue.OutcomeWaiting
		case 3, 4:
			p.Outcome, p.Error = queue.OutcomeRetry, fmt.Sprintf("boom %d", r.step)
		case 5:
			p.Outcome, p.Error = queue.OutcomeFailed, fmt.Sprintf("fatal %d", r.step)
		case 6, 7:
			p.Outcome = queue.OutcomeSnoozed
		default:
			p.Outcome = queue.OutcomeReleased
		}
		if p.Outcome == queue.OutcomeRetry || p.Outcome == queue.OutcomeSnoozed {
			p.RetryIn = pick(r, []time.Duration{0, -time.Second, diffShortDelay, diffShortDelay, diffLong})
		}
		ps = append(ps, p)
		descs = append(descs, fmt.Sprintf("%v %s in %v", l, p.Outcome, p.RetryIn))
	}
	if len(ps) == 0 {
		return
	}
	errs, err := r.x.JobFinish(r.f.ctx, ps)
	r.logf("finish [%s] -> %v, %v", strings.Join(descs, "; "), errs, err)
	if err != nil {
		r.fatalf("JobFinish: %v", err)
	}
	if len(errs) != len(ps) {
		r.fatalf("JobFinish: %d results for %d params", len(errs), len(ps))
	}
	for i, p := range ps {
		j := r.held(p.Lease)
		if j == nil {
			if !errors.Is(errs[i], queue.ErrLeaseLost) {
				r.fatalf("finish %s with a lost lease (job now %v): %v, want ErrLeaseLost", descs[i], r.jobs[p.Lease.JobID], errs[i])
			}
			continue
		}
		if errs[i] != nil {
			r.fatalf("finish %s of %s with its held lease: %v", descs[i], j, errs[i])
		}
		r.endAttempt(j, p.Outcome, p.Error)
		switch p.Outcome {
		case queue.OutcomeCompleted:
			j.state, j.errMsg, j.progress = queue.StateCompleted, "", 100
		case queue.OutcomeRetry, queue.OutcomeSnoozed:
			j.state = queue.StatePending
			if p.RetryIn > 0 {
				j.state, j.soon = queue.StateScheduled, p.RetryIn == diffShortDelay
			}
			if p.Outcome == queue.OutcomeRetry {
				j.errMsg = p.Error
			} else {
				j.attempt--
			}
		case queue.OutcomeFailed:
			j.state, j.errMsg = queue.StateFailed, p.Error
		case queue.OutcomeReleased:
			j.state = queue.StatePending
			j.attempt--
		case queue.OutcomeWaiting:
			j.state = queue.StatePending
			if r.openChildren(j.id) > 0 {
				j.state = queue.StateWaiting
			}
			j.attempt--
		}
		r.ended(j)
	}
}

// openChildren counts the model's unfinished children of job id.
func (r *diffRun) openChildren(id int64) int {
	return len(r.sorted(func(c *dJob) bool { return c.parent == id && !c.state.Finished() }))
}

// ended follows j into a final state, if it is in one: the last open
// child of a waiting parent makes it pending.
func (r *diffRun) ended(j *dJob) {
	if !j.state.Finished() || j.parent == 0 {
		return
	}
	if p := r.jobs[j.parent]; p != nil && p.state == queue.StateWaiting && r.openChildren(p.id) == 0 {
		p.state = queue.StatePending
	}
}

// stepNames are the names of the steps opSpawn starts.
var stepNames = []string{"s1", "s2", "s3", "s4"}

// opSpawn spawns steps under a lease, held or not: new steps are children
// of the lease's job, in its tenant; steps it spawned before come back as
// duplicates; a lease not held inserts nothing.
func (r *diffRun) opSpawn() {
	l, ok := r.someLease()
	if !ok {
		return
	}
	names := slices.Clone(stepNames)
	r.rng.Shuffle(len(names), func(i, k int) { names[i], names[k] = names[k], names[i] })
	names = names[:1+r.rng.IntN(3)]
	p := &driver.JobSpawnParams{Lease: l}
	for _, n := range names {
		p.Children = append(p.Children, &driver.JobInsertParams{
			Queue: pick(r, diffQueues), Kind: testKind, TenantID: "ignored", Args: []byte(`{}`),
			Priority: pick(r, []int{0, 0, 1}), MaxAttempts: 1 + r.rng.IntN(2), Cost: pick(r, []int{1, 2}),
			UniqueKey: driver.StepKey(l.JobID, n), FailOnTimeout: r.rng.IntN(4) == 0,
		})
	}
	res, err := r.x.JobSpawn(r.f.ctx, p)
	r.logf("spawn %v %v -> %v", l, names, err)
	parent := r.held(l)
	if parent == nil {
		if !errors.Is(err, queue.ErrLeaseLost) {
			r.fatalf("spawn with the lost lease %v: %v, want ErrLeaseLost", l, err)
		}
		return
	}
	if err != nil {
		r.fatalf("spawn under %v: %v", l, err)
	}
	for i, c := range p.Children {
		g := res[i]
		var dup *dJob
		for _, j := range r.sorted(nil) {
			if j.tenant == parent.tenant && j.uniqueKey == c.UniqueKey {
				dup = j
			}
		}
		if dup != nil {
			if !g.Duplicate || g.Job.ID != dup.id {
				r.fatalf("spawn of %s again: job %d duplicate=%v, want %s", names[i], g.Job.ID, g.Duplicate, dup)
			}
			continue
		}
		if g.Duplicate || r.jobs[g.Job.ID] != nil || g.Job.ParentID != parent.id || g.Job.TenantID != parent.tenant {
			r.fatalf("spawn of %s: %s duplicate=%v parent %d, want a new step of %s", names[i], describe(g.Job), g.Duplicate, g.Job.ParentID, parent)
		}
		r.jobs[g.Job.ID] = &dJob{
			id: g.Job.ID, queue: c.Queue, tenant: parent.tenant, state: queue.StatePending, priority: c.Priority,
			maxAttempts: c.MaxAttempts, failOnTimeout: c.FailOnTimeout, uniqueKey: c.UniqueKey, cost: c.Cost,
			parent: parent.id,
		}
	}
}

// endAttempt records the end of j's current attempt and clears its lease.
func (r *diffRun) endAttempt(j *dJob, outcome queue.Outcome, errText string) {
	w := attemptWant{j.attempt, outcome, errText}
	if outcome == queue.OutcomeTimedOut || outcome == queue.OutcomeCancelled || outcome == queue.OutcomeCompleted {
		w.err = anyError
	}
	j.attempts = append(j.attempts, w)
	j.lease, j.shortLease = queue.Lease{}, false
}

func (r *diffRun) opCancel() {
	all := r.sorted(nil)
	p := &driver.JobCancelParams{ID: 1 << 40}
	var j *dJob
	if len(all) > 0 && r.rng.IntN(12) != 0 {
		j = pick(r, all)
		p.ID = j.id
	}
	switch r.rng.IntN(4) {
	case 0:
		if j != nil {
			p.TenantID = j.tenant
		}
	case 1:
		p.TenantID = "zz"
	}
	if r.rng.IntN(3) == 0 {
		p.Discard = true
		if r.rng.IntN(2) == 0 {
			p.Reason = "poison"
		}
	}
	got, err := r.x.JobCancel(r.f.ctx, p)
	r.logf("cancel %+v (%v) -> %v", *p, j, err)
	switch {
	case j == nil || (p.TenantID != "" && p.TenantID != j.tenant):
		if !errors.Is(err, queue.ErrNotFound) {
			r.fatalf("cancel %+v of a missing job or another tenant's: %v, want ErrNotFound", *p, err)
		}
		return
	case j.state.Finished():
		if !errors.Is(err, queue.ErrConflict) {
			r.fatalf("cancel of finished %s: %v, want ErrConflict", j, err)
		}
		return
	case err != nil:
		r.fatalf("cancel of %s: %v", j, err)
	}
	r.cancel(j, p)
	if got == nil || got.ID != j.id || got.State != j.state {
		r.fatalf("cancel of %s returned %v, want the job %s", j, got, j.state)
	}
}

// cancel follows the cancel of j, not finished, and of its unfinished
// children (theirs first).
func (r *diffRun) cancel(j *dJob, p *driver.JobCancelParams) {
	for _, c := range r.sorted(func(c *dJob) bool { return c.parent == j.id && !c.state.Finished() }) {
		r.cancel(c, p)
	}
	if j.state == queue.StateRunning {
		j.hold, j.holdShort, j.holdExp = j.lease, j.shortLease, j.leaseExp
		r.endAttempt(j, queue.OutcomeCancelled, "")
	}
	j.state, j.soon = queue.StateCancelled, false
	if p.Discard {
		j.state, j.errMsg = queue.StateFailed, cmp.Or(p.Reason, "discarded")
	}
	r.ended(j)
}

// opRelease frees the slot of a cancelled attempt, or tries a lease that
// holds none (a running job's, a released one's).
func (r *diffRun) opRelease() {
	held := r.sorted(func(j *dJob) bool { return j.hold.Token != 0 })
	var l queue.Lease
	var j *dJob
	switch {
	case len(held) > 0 && r.rng.IntN(4) != 0:
		j = pick(r, held)
		l = j.hold
	default:
		if ls := r.heldLeases(); len(ls) > 0 {
			l = pick(r, ls)
		} else {
			l = queue.Lease{JobID: 1 << 40, Attempt: 1, Token: 1}
		}
	}
	n, err := r.x.JobSlotRelease(r.f.ctx, []queue.Lease{l})
	r.logf("release slot %v (%v) -> %d, %v", l, j, n, err)
	if err != nil {
		r.fatalf("JobSlotRelease: %v", err)
	}
	want := 0
	if j != nil {
		want = 1
		j.hold, j.holdShort = queue.Lease{}, false
	}
	if n != want {
		r.fatalf("JobSlotRelease(%v) freed %d slots, want %d", l, n, want)
	}
}

// waitStore waits until the store's clock has passed deadline.
func (r *diffRun) waitStore(deadline time.Time) {
	if deadline.IsZero() {
		return
	}
	limit := time.Now().Add(waitTimeout)
	for {
		now, err := r.x.Now(r.f.ctx)
		if err != nil {
			r.fatalf("Now: %v", err)
		}
		if now.After(deadline.Add(time.Millisecond)) {
			return
		}
		if time.Now().After(limit) {
			r.fatalf("the store's clock (%v) did not pass %v within %v", now, deadline, waitTimeout)
		}
		time.Sleep(min(deadline.Sub(now)+2*time.Millisecond, 50*time.Millisecond))
	}
}

// waitDue returns the jobs match selects, in id order, once the store's
// clock has passed the latest of their times at.
func (r *diffRun) waitDue(match func(*dJob) bool, at func(*dJob) time.Time) []*dJob {
	jobs := r.sorted(match)
	var deadline time.Time
	for _, j := range jobs {
		if at(j).After(deadline) {
			deadline = at(j)
		}
	}
	r.waitStore(deadline)
	return jobs
}

// sweepLimit is a sweep's batch limit: mostly large, one time in four 1.
func (r *diffRun) sweepLimit() int {
	if r.rng.IntN(4) == 0 {
		return 1
	}
	return 1000
}

func (r *diffRun) opRescue() {
	expected := r.waitDue(func(j *dJob) bool { return j.state == queue.StateRunning && j.shortLease },
		func(j *dJob) time.Time { return j.leaseExp })
	holds := r.waitDue(func(j *dJob) bool { return j.hold.Token != 0 && j.holdShort },
		func(j *dJob) time.Time { return j.holdExp })
	limit := r.sweepLimit()
	if len(holds) > 1 {
		limit = 1000 // which of them a limit of 1 frees is the store's choice
	}
	got, err := r.x.JobRescue(r.f.ctx, &driver.JobRescueParams{Limit: limit})
	r.logf("rescue limit %d -> %v, %v (expired: %v)", limit, ids(got), err, ids(toQueueJobs(expected)))
	if err != nil {
		r.fatalf("JobRescue: %v", err)
	}
	if len(got) != min(limit, len(expected)) {
		r.fatalf("rescue of limit %d took %v, want %d of the expired %v", limit, ids(got), min(limit, len(expected)), ids(toQueueJobs(expected)))
	}
	for _, j := range holds {
		j.hold, j.holdShort = queue.Lease{}, false // their slots are free
	}
	for _, g := range got {
		j := r.jobs[g.ID]
		if j == nil || !slices.Contains(expected, j) {
			r.fatalf("rescue took job %d (%v), whose lease had not expired", g.ID, j)
		}
		r.endAttempt(j, queue.OutcomeTimedOut, "")
		if j.attempt < j.maxAttempts && !j.failOnTimeout {
			j.state = queue.StatePending
		} else {
			j.state, j.errMsg = queue.StateFailed, timedOutMessage
			r.ended(j)
		}
		if g.State != j.state || g.Attempt != j.attempt || g.LeaseToken != 0 {
			r.fatalf("rescue returned %s, want %s at attempt %d without a lease", describe(g), j.state, j.attempt)
		}
	}
}

func (r *diffRun) opSchedule() {
	due := r.waitDue(func(j *dJob) bool { return j.state == queue.StateScheduled && j.soon },
		func(j *dJob) time.Time { return j.runAt })
	limit := r.sweepLimit()
	n, err := r.x.JobSchedule(r.f.ctx, &driver.JobScheduleParams{Limit: limit})
	r.logf("schedule limit %d -> %d, %v (due: %v)", limit, n, err, ids(toQueueJobs(due)))
	if err != nil {
		r.fatalf("JobSchedule: %v", err)
	}
	if n != min(limit, len(due)) {
		r.fatalf("schedule of limit %d moved %d, want %d of the due %v", limit, n, min(limit, len(due)), ids(toQueueJobs(due)))
	}
	moved := 0
	for _, j := range due {
		g, err := r.x.JobGet(r.f.ctx, j.id)
		if err != nil {
			r.fatalf("JobGet(%d): %v", j.id, err)
		}
		if g.State == queue.StatePending {
			j.state, j.soon = queue.StatePending, false
			moved++
		}
	}
	if moved != n {
		r.fatalf("schedule said it moved %d jobs, %d of the due ones are pending", n, moved)
	}
}

func (r *diffRun) opPauseQueue() {
	q, paused := pick(r, diffQueues), r.rng.IntN(2) == 0
	err := r.x.QueuePauseSet(r.f.ctx, &driver.QueuePauseParams{Queue: q, Paused: paused})
	r.logf("pause queue %s %v -> %v", q, paused, err)
	if err != nil {
		r.fatalf("QueuePauseSet: %v", err)
	}
	r.pausedQueues[q] = paused
	r.checkPauses()
}

func (r *diffRun) opPauseTenant() {
	tn, paused := pick(r, diffTenants), r.rng.IntN(2) == 0
	err := r.x.TenantPauseSet(r.f.ctx, &driver.TenantPauseParams{TenantID: tn, Paused: paused})
	r.logf("pause tenant %s %v -> %v", tn, paused, err)
	if err != nil {
		r.fatalf("TenantPauseSet: %v", err)
	}
	r.pausedTenants[tn] = paused
	r.checkPauses()
}

func (r *diffRun) checkPauses() {
	p, err := r.x.PauseList(r.f.ctx)
	if err != nil {
		r.fatalf("PauseList: %v", err)
	}
	for _, q := range diffQueues {
		if p.QueuePaused(q) != r.pausedQueues[q] {
			r.fatalf("PauseList says queue %s paused=%v, want %v", q, p.QueuePaused(q), r.pausedQueues[q])
		}
	}
	for _, tn := range diffTenants {
		if p.TenantPaused(tn) != r.pausedTenants[tn] {
			r.fatalf("PauseList says tenant %s paused=%v, want %v", tn, p.TenantPaused(tn), r.pausedTenants[tn])
		}
	}
}

func (r *diffRun) opTenantLimit() {
	tn, q, n := pick(r, diffTenants), pick(r, []string{"", "q1", "q2"}), r.rng.IntN(4)
	err := r.x.TenantLimitSet(r.f.ctx, &driver.TenantLimitParams{TenantID: tn, Queue: q, MaxRunning: n})
	r.logf("tenant limit %s %q %d -> %v", tn, q, n, err)
	if err != nil {
		r.fatalf("TenantLimitSet: %v", err)
	}
	if n == 0 {
		delete(r.tenantLimits, tenantQueueKey{tn, q})
	} else {
		r.tenantLimits[tenantQueueKey{tn, q}] = n
	}
}

func (r *diffRun) opQueueConfig() {
	q, n := pick(r, diffQueues), 1+r.rng.IntN(3)
	err := r.x.QueueConfigSet(r.f.ctx, &driver.QueueConfigParams{Queue: q, DefaultTenantLimit: n})
	r.logf("queue config %s %d -> %v", q, n, err)
	if err != nil {
		r.fatalf("QueueConfigSet: %v", err)
	}
	r.queueLimits[q] = n
}

func (r *diffRun) opRetry() {
	all := r.sorted(nil)
	if len(all) == 0 {
		return
	}
	cands := r.sorted(func(j *dJob) bool { return j.state == queue.StateFailed || j.state == queue.StateCancelled })
	parents := r.sorted(func(j *dJob) bool {
		return (j.state == queue.StateFailed || j.state == queue.StateCancelled) &&
			len(r.sorted(func(c *dJob) bool { return c.parent == j.id })) > 0
	})
	j := pick(r, all)
	switch {
	case len(parents) > 0 && r.rng.IntN(2) == 0:
		j = pick(r, parents)
	case len(cands) > 0 && r.rng.IntN(3) != 0:
		j = pick(r, cands)
	}
	got, err := r.x.JobRetry(r.f.ctx, &driver.JobRetryParams{ID: j.id})
	r.logf("retry %s -> %v, %v", j, got, err)
	if j.state != queue.StateFailed && j.state != queue.StateCancelled {
		if !errors.Is(err, queue.ErrConflict) {
			r.fatalf("retry of %s: %v, want ErrConflict", j, err)
		}
		return
	}
	if err != nil {
		r.fatalf("retry of %s: %v", j, err)
	}
	if len(r.sorted(func(c *dJob) bool { return c.parent == j.id })) > 0 {
		r.reopen(j)
		if got.ID != j.id || got.State != j.state || got.Attempt != j.attempt {
			r.fatalf("retry of the workflow parent %s returned %s, want it re-opened", j, describe(got))
		}
		return
	}
	if got.RetryOf != j.id || got.State != queue.StatePending || r.jobs[got.ID] != nil {
		r.fatalf("retry of %s returned %s retry_of %d, want a new pending job retrying it", j, describe(got), got.RetryOf)
	}
	r.jobs[got.ID] = &dJob{
		id: got.ID, queue: j.queue, tenant: j.tenant, state: queue.StatePending, priority: j.priority,
		maxAttempts: j.maxAttempts, failOnTimeout: j.failOnTimeout, retryOf: j.id, cost: j.cost,
	}
	if got.Cost != j.cost {
		r.fatalf("retry of %s has cost %d, want %d", j, got.Cost, j.cost)
	}
}

// reopen follows the retry of the failed or cancelled workflow parent j:
// its failed and cancelled children run again (re-opened themselves when
// they have children), and it waits for its open ones.
func (r *diffRun) reopen(j *dJob) {
	open := 0
	for _, c := range r.sorted(func(c *dJob) bool { return c.parent == j.id }) {
		switch {
		case c.state == queue.StateFailed || c.state == queue.StateCancelled:
			if len(r.sorted(func(g *dJob) bool { return g.parent == c.id })) > 0 {
				r.reopen(c)
			} else {
				r.requeue(c)
			}
			open++
		case !c.state.Finished():
			open++
		}
	}
	r.requeue(j)
	if open > 0 {
		j.state = queue.StateWaiting
	}
}

// requeue follows a failed or cancelled job made pending by a retry: its
// attempts reset, or, while a cancelled attempt holds its slot, its
// budget raised (the attempt numbers go on past the hold's).
func (r *diffRun) requeue(j *dJob) {
	if j.hold.Token != 0 {
		j.maxAttempts += j.attempt
	} else {
		j.attempt = 0
	}
	j.state, j.errMsg, j.soon = queue.StatePending, "", false
}

func (r *diffRun) opPosition() {
	all := r.sorted(nil)
	if len(all) == 0 {
		return
	}
	j := pick(r, all)
	waiting := r.sorted(func(j *dJob) bool { return j.state == queue.StatePending || j.state == queue.StateScheduled })
	if len(waiting) > 0 && r.rng.IntN(4) != 0 {
		j = pick(r, waiting)
	}
	pos, err := r.x.JobPosition(r.f.ctx, j.id)
	r.logf("position %s -> %+v, %v", j, pos, err)
	if j.state != queue.StatePending && j.state != queue.StateScheduled {
		if !errors.Is(err, queue.ErrConflict) {
			r.fatalf("position of %s: %v, want ErrConflict", j, err)
		}
		return
	}
	if err != nil {
		r.fatalf("position of %s: %v", j, err)
	}
	ahead := 0
	for _, o := range r.pendingInOrder(j.tenant, j.queue) {
		if o == j {
			break
		}
		ahead++
	}
	want := driver.Position{
		Ahead: ahead, Running: r.running(j.tenant, j.queue), Limit: r.limit(j.tenant, j.queue),
		Paused: r.pausedQueues[j.queue] || r.pausedTenants[j.tenant],
	}
	got := *pos
	got.AvgDuration = 0
	if got != want {
		r.fatalf("position of %s is %+v, want %+v", j, got, want)
	}
}

func (r *diffRun) opDelete() {
	ages := func() time.Duration { return pick(r, []time.Duration{0, diffLong}) }
	p := &driver.JobDeleteFinishedParams{CompletedAge: ages(), FailedAge: ages(), CancelledAge: ages(), Limit: 1000}
	age := map[queue.State]time.Duration{queue.StateCompleted: p.CompletedAge, queue.StateFailed: p.FailedAge, queue.StateCancelled: p.CancelledAge}
	var gone []*dJob
	var deadline time.Time
	for _, j := range r.sorted(func(j *dJob) bool { return j.state.Finished() }) {
		if age[j.state] == 0 && j.hold.Token == 0 { // a job is kept while its slot is held
			gone = append(gone, j)
			if j.completedAt.After(deadline) {
				deadline = j.completedAt
			}
		}
	}
	r.waitStore(deadline)
	n, err := r.x.JobDeleteFinished(r.f.ctx, p)
	r.logf("delete finished %+v -> %d, %v (want %v)", *p, n, err, ids(toQueueJobs(gone)))
	if err != nil {
		r.fatalf("JobDeleteFinished: %v", err)
	}
	if n != len(gone) {
		r.fatalf("JobDeleteFinished %+v deleted %d, want %d: %v", *p, n, len(gone), ids(toQueueJobs(gone)))
	}
	for _, j := range gone {
		delete(r.jobs, j.id)
	}
}

// ---- checks ----

// check compares every job with the model, and every fifth step the queue
// stats and one job's attempts.
func (r *diffRun) check() {
	r.t.Helper()
	list, err := r.f.x.JobList(r.f.ctx, &driver.JobListParams{Limit: 10000})
	if err != nil {
		r.fatalf("JobList: %v", err)
	}
	want := r.sorted(nil)
	if len(list) != len(want) {
		r.fatalf("JobList has %d jobs, the model %d", len(list), len(want))
	}
	for i, g := range list {
		j := want[len(want)-1-i]
		if g.ID != j.id {
			r.fatalf("JobList position %d is job %d, want %d (newest first)", i, g.ID, j.id)
		}
		r.checkJob(g, j)
	}
	if r.step%5 == 4 {
		r.checkStats()
		if len(want) > 0 {
			r.checkAttempts(pick(r, want))
		}
	}
}

// checkStats compares the queues' stats with the model.
func (r *diffRun) checkStats() {
	r.t.Helper()
	counts := map[string]map[queue.State]int{}
	for _, j := range r.sorted(nil) {
		if counts[j.queue] == nil {
			counts[j.queue] = map[queue.State]int{}
		}
		counts[j.queue][j.state]++
	}
	for _, q := range diffQueues {
		st, err := r.f.x.QueueStats(r.f.ctx, q)
		if err != nil {
			r.fatalf("QueueStats(%s): %v", q, err)
		}
		got := map[queue.State]int{}
		for s, n := range st.Counts {
			if n != 0 {
				got[s] = n
			}
		}
		if !mapsEqual(got, counts[q]) {
			r.fatalf("QueueStats(%s).Counts = %v, want %v", q, got, counts[q])
		}
		if st.Paused != r.pausedQueues[q] {
			r.fatalf("QueueStats(%s).Paused = %v, want %v", q, st.Paused, r.pausedQueues[q])
		}
	}
}

func mapsEqual(a, b map[queue.State]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func (r *diffRun) checkJob(g *queue.Job, j *dJob) {
	r.t.Helper()
	bad := func(what string, got, want any) {
		r.t.Helper()
		r.fatalf("%s: %s is %v, want %v\nstored: %+v", j, what, got, want, *g)
	}
	switch {
	case g.State != j.state:
		bad("state", g.State, j.state)
	case g.Queue != j.queue || g.TenantID != j.tenant:
		bad("tenant/queue", g.TenantID+"/"+g.Queue, j.tenant+"/"+j.queue)
	case g.Attempt != j.attempt:
		bad("attempt", g.Attempt, j.attempt)
	case g.Priority != j.priority:
		bad("priority", g.Priority, j.priority)
	case g.MaxAttempts != j.maxAttempts:
		bad("max attempts", g.MaxAttempts, j.maxAttempts)
	case g.FailOnTimeout != j.failOnTimeout:
		bad("fail on timeout", g.FailOnTimeout, j.failOnTimeout)
	case g.UniqueKey != j.uniqueKey:
		bad("unique key", g.UniqueKey, j.uniqueKey)
	case g.RetryOf != j.retryOf:
		bad("retry of", g.RetryOf, j.retryOf)
	case g.ParentID != j.parent:
		bad("parent", g.ParentID, j.parent)
	case g.ErrorMessage != j.errMsg:
		bad("error message", g.ErrorMessage, j.errMsg)
	case g.Stage != j.stage || g.Progress != j.progress:
		bad("stage/progress", fmt.Sprintf("%q %d", g.Stage, g.Progress), fmt.Sprintf("%q %d", j.stage, j.progress))
	case j.state == queue.StateRunning && g.Lease() != j.lease:
		bad("lease", g.Lease(), j.lease)
	case j.state == queue.StateRunning && g.LeaseExpiresAt.IsZero():
		bad("lease expiry", g.LeaseExpiresAt, "set")
	case j.state != queue.StateRunning && (g.LeaseToken != 0 || !g.LeaseExpiresAt.IsZero()):
		bad("lease", fmt.Sprintf("token %d until %v", g.LeaseToken, g.LeaseExpiresAt), "none")
	case j.state.Finished() != !g.CompletedAt.IsZero():
		bad("completed at", g.CompletedAt, fmt.Sprintf("set iff finished (%v)", j.state.Finished()))
	}
	j.leaseExp, j.runAt, j.completedAt = g.LeaseExpiresAt, g.RunAt, g.CompletedAt
}

func (r *diffRun) checkAttempts(j *dJob) {
	r.t.Helper()
	got, err := r.f.x.JobAttempts(r.f.ctx, j.id)
	if err != nil {
		r.fatalf("JobAttempts(%d): %v", j.id, err)
	}
	ok := len(got) == len(j.attempts)
	for i := 0; ok && i < len(got); i++ {
		w := j.attempts[i]
		ok = got[i].Attempt == w.attempt && got[i].Outcome == w.outcome && (w.err == anyError || got[i].Error == w.err)
	}
	if !ok {
		var want []string
		for _, w := range j.attempts {
			want = append(want, fmt.Sprintf("%d:%s(%q)", w.attempt, w.outcome, strings.ReplaceAll(w.err, anyError, "*")))
		}
		r.fatalf("attempts of %s are %s, want %v", j, attemptsString(got), want)
	}
}

// finalCheck checks the stats and every job's attempts.
func (r *diffRun) finalCheck() {
	r.checkStats()
	for _, j := range r.sorted(nil) {
		r.checkAttempts(j)
	}
}

// markUnsteady marks the tenants that are without work, or paused, in a
// queue that had a claim: their virtual time is no longer the model's.
func (r *diffRun) markUnsteady() {
	for q := range r.queueClaimed {
		for _, tn := range diffTenants {
			if r.pausedTenants[tn] || len(r.pendingInOrder(tn, q)) == 0 {
				r.unsteady[tenantQueueKey{tn, q}] = true
			}
		}
	}
}
