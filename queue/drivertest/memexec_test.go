package drivertest_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

func (x *memExec) JobInsertMany(_ context.Context, ps []*driver.JobInsertParams) ([]queue.InsertResult, error) {
	out := make([]queue.InsertResult, len(ps))
	err := x.write(func(st *memState, notify func(string, string)) error {
		now := time.Now()
		for i, p := range ps {
			out[i] = st.insert(p, 0, now, notify)
		}
		return nil
	})
	return out, err
}

// insert inserts one job, a child of parent when it is not 0, or returns
// the job holding its unique key.
func (s *memState) insert(p *driver.JobInsertParams, parent int64, now time.Time, notify func(string, string)) queue.InsertResult {
	if p.UniqueKey != "" {
		if j := s.findUnique(p.TenantID, p.UniqueKey); j != nil {
			return queue.InsertResult{Job: copyJob(j), Duplicate: true}
		}
	}
	s.nextID++
	j := &queue.Job{
		ID: s.nextID, Queue: p.Queue, Kind: p.Kind, TenantID: p.TenantID, Args: p.Args,
		State: queue.StatePending, Priority: p.Priority, MaxAttempts: p.MaxAttempts, RunAt: p.RunAt,
		UniqueKey: p.UniqueKey, RetryOf: p.RetryOf, FailOnTimeout: p.FailOnTimeout, Cost: max(p.Cost, 1),
		Metadata: maps.Clone(p.Metadata), CreatedAt: now, UpdatedAt: now, ParentID: parent,
	}
	if j.RunAt.IsZero() {
		j.RunAt = now
	}
	if j.RunAt.After(now) {
		j.State = queue.StateScheduled
	} else {
		notify(driver.TopicInsert, j.Queue)
	}
	s.jobs[j.ID] = j
	return queue.InsertResult{Job: copyJob(j)}
}

func (x *memExec) JobSpawn(_ context.Context, p *driver.JobSpawnParams) ([]queue.InsertResult, error) {
	out := make([]queue.InsertResult, len(p.Children))
	err := x.write(func(st *memState, notify func(string, string)) error {
		parent := st.held(p.Lease)
		if parent == nil {
			return queue.ErrLeaseLost
		}
		now := time.Now()
		for i, c := range p.Children {
			cp := *c
			cp.TenantID = parent.TenantID
			out[i] = st.insert(&cp, parent.ID, now, notify)
			if !out[i].Duplicate {
				st.open[parent.ID]++
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (x *memExec) JobChildren(_ context.Context, id int64) ([]*queue.Job, error) {
	var out []*queue.Job
	err := x.read(func(st *memState) error {
		out = st.children(id)
		return nil
	})
	return out, err
}

// children returns copies of the children of job id, in id order.
func (s *memState) children(id int64) []*queue.Job {
	var out []*queue.Job
	for _, j := range s.sorted() {
		if j.ParentID == id {
			out = append(out, copyJob(j))
		}
	}
	return out
}

// ended counts down the unfinished children of the parent of j, which
// has just finished, and makes a waiting parent whose last child it was
// pending.
func (s *memState) ended(j *queue.Job, now time.Time, notify func(string, string)) {
	p := s.jobs[j.ParentID]
	if j.ParentID == 0 || p == nil {
		return
	}
	s.open[p.ID] = max(s.open[p.ID]-1, 0)
	if p.State == queue.StateWaiting && s.open[p.ID] == 0 {
		p.State, p.UpdatedAt = queue.StatePending, now
		notify(driver.TopicInsert, p.Queue)
	}
}

func (s *memState) findUnique(tenant, key string) *queue.Job {
	for _, j := range s.jobs {
		if j.TenantID == tenant && j.UniqueKey == key {
			return j
		}
	}
	return nil
}

func (x *memExec) JobGet(_ context.Context, id int64) (*queue.Job, error) {
	var out *queue.Job
	err := x.read(func(st *memState) error {
		j := st.jobs[id]
		if j == nil {
			return fmt.Errorf("job %d: %w", id, queue.ErrNotFound)
		}
		out = copyJob(j)
		return nil
	})
	return out, err
}

func (x *memExec) JobList(_ context.Context, p *queue.JobListParams) ([]*queue.Job, error) {
	var out []*queue.Job
	err := x.read(func(st *memState) error {
		for _, j := range st.jobs {
			if (p.TenantID == "" || j.TenantID == p.TenantID) && (p.Queue == "" || j.Queue == p.Queue) &&
				(p.Kind == "" || j.Kind == p.Kind) && (len(p.States) == 0 || slices.Contains(p.States, j.State)) &&
				(p.BeforeID == 0 || j.ID < p.BeforeID) {
				out = append(out, copyJob(j))
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b *queue.Job) int { return cmp.Compare(b.ID, a.ID) })
	limit := p.Limit
	if limit == 0 {
		limit = 100
	}
	return out[:min(limit, len(out))], err
}

func (x *memExec) JobClaim(_ context.Context, p *driver.JobClaimParams) ([]*queue.Job, bool, error) {
	if err := queue.ValidateQueueName(p.Queue); err != nil {
		return nil, false, err
	}
	if p.Max <= 0 || p.LeaseDuration <= 0 {
		return nil, false, fmt.Errorf("%w: claim needs Max > 0 and LeaseDuration > 0", queue.ErrInvalid)
	}
	var (
		out  []*queue.Job
		more bool
	)
	err := x.write(func(st *memState, _ func(string, string)) error {
		now := time.Now()
		if _, paused := st.pausedQueues[p.Queue]; paused {
			return nil
		}
		pending := make(map[string][]*queue.Job)
		for _, j := range st.jobs {
			if _, paused := st.pausedTenants[j.TenantID]; paused {
				continue
			}
			if j.Queue == p.Queue && j.State == queue.StatePending {
				pending[j.TenantID] = append(pending[j.TenantID], j)
			}
		}
		var tenants []string
		room := make(map[string]int)
		for tenant, jobs := range pending {
			if r := st.limit(tenant, p.Queue) - st.running(tenant, p.Queue); r > 0 {
				tenants = append(tenants, tenant)
				room[tenant] = min(r, len(jobs))
				slices.SortFunc(jobs, func(a, b *queue.Job) int {
					return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.ID, b.ID))
				})
			}
		}
		// A tenant that joins those with work starts at the least virtual
		// time of those that kept work (at their limit or not): no credit
		// banked while idle.
		vmin, any := 0.0, false
		for tenant := range pending {
			if k := (tenantQueue{tenant, p.Queue}); st.ready[k] && (!any || st.vtime[k] < vmin) {
				vmin, any = st.vtime[k], true
			}
		}
		for _, tenant := range tenants {
			if k := (tenantQueue{tenant, p.Queue}); !st.ready[k] {
				st.vtime[k] = max(st.vtime[k], vmin)
			}
		}
		slices.SortFunc(tenants, func(a, b string) int {
			ka, kb := tenantQueue{a, p.Queue}, tenantQueue{b, p.Queue}
			return cmp.Or(cmp.Compare(st.vtime[ka], st.vtime[kb]), cmp.Compare(st.served[ka], st.served[kb]),
				cmp.Compare(pending[a][0].ID, pending[b][0].ID))
		})
		if len(tenants) > p.Max {
			tenants, more = tenants[:p.Max], true
		}
		if len(tenants) == 0 {
			return nil
		}
		per := (p.Max + len(tenants) - 1) / len(tenants)
		fair := make([]driver.FairTenant, len(tenants))
		for i, tenant := range tenants {
			k := tenantQueue{tenant, p.Queue}
			free := st.limit(tenant, p.Queue) - st.running(tenant, p.Queue)
			want := min(per, free)
			f := driver.FairTenant{VTime: st.vtime[k], Weight: st.weight(tenant), Free: free, Wanted: want}
			for _, j := range pending[tenant][:min(want, len(pending[tenant]))] {
				f.Costs = append(f.Costs, max(j.Cost, 1))
			}
			fair[i] = f
		}
		takes, vtimes, cut := driver.FairTake(fair, p.Max)
		more = more || cut
		defer func() {
			clear(st.ready)
			for _, j := range st.jobs {
				if j.State == queue.StatePending {
					st.ready[tenantQueue{j.TenantID, j.Queue}] = true
				}
			}
		}()
		for i, tenant := range tenants {
			take := pending[tenant][:takes[i]]
			if len(take) == 0 {
				// Not served: it keeps its turn for the next claim.
				more = true
				continue
			}
			st.vtime[tenantQueue{tenant, p.Queue}] = vtimes[i]
			for _, j := range take {
				j.State, j.Attempt, j.LeaseToken = queue.StateRunning, j.Attempt+1, newToken()
				j.LeaseExpiresAt, j.WorkerID, j.StartedAt, j.UpdatedAt = now.Add(p.LeaseDuration), p.WorkerID, now, now
				j.Stage, j.Progress, j.ProgressMessage = "", 0, ""
				out = append(out, copyJob(j))
			}
			st.serveSeq++
			st.served[tenantQueue{tenant, p.Queue}] = st.serveSeq
		}
		return nil
	})
	return out, more, err
}

func (x *memExec) JobHeartbeat(_ context.Context, p *driver.JobHeartbeatParams) ([]queue.Lease, error) {
	if len(p.Leases) > 0 && p.LeaseDuration <= 0 {
		return nil, fmt.Errorf("%w: heartbeat needs LeaseDuration > 0", driver.ErrInvalid)
	}
	var out []queue.Lease
	err := x.write(func(st *memState, _ func(string, string)) error {
		for _, l := range p.Leases {
			if j := st.held(l); j != nil {
				j.LeaseExpiresAt = time.Now().Add(p.LeaseDuration)
				out = append(out, l)
			}
		}
		return nil
	})
	return out, err
}

func (x *memExec) JobProgress(_ context.Context, p *driver.JobProgressParams) error {
	if p.PartialResult != nil {
		if err := driver.ValidatePartialResult(p.PartialResult); err != nil {
			return err
		}
	}
	return x.write(func(st *memState, notify func(string, string)) error {
		j := st.held(p.Lease)
		if j == nil {
			return queue.ErrLeaseLost
		}
		j.Stage, j.Progress, j.ProgressMessage, j.UpdatedAt = p.Stage, p.Percent, p.Message, time.Now()
		if p.PartialResult != nil {
			j.PartialResult = slices.Clone(p.PartialResult)
		}
		notify(driver.TopicChange, j.Queue)
		return nil
	})
}

func (x *memExec) JobFinish(_ context.Context, ps []*driver.JobFinishParams) ([]error, error) {
	out := make([]error, len(ps))
	err := x.write(func(st *memState, notify func(string, string)) error {
		now := time.Now()
		for i, p := range ps {
			j := st.held(p.Lease)
			if j == nil {
				out[i] = queue.ErrLeaseLost
				continue
			}
			st.endAttempt(j, p.Outcome, p.Error, p.WorkerID, now)
			switch p.Outcome {
			case queue.OutcomeCompleted:
				j.State, j.CompletedAt, j.Result, j.Progress, j.ErrorMessage = queue.StateCompleted, now, p.Result, 100, ""
			case queue.OutcomeRetry:
				j.ErrorMessage, j.State, j.RunAt = p.Error, queue.StatePending, now
				if p.RetryIn > 0 {
					j.State, j.RunAt = queue.StateScheduled, now.Add(p.RetryIn)
				}
			case queue.OutcomeFailed:
				j.State, j.CompletedAt, j.ErrorMessage = queue.StateFailed, now, p.Error
			case queue.OutcomeSnoozed:
				j.State, j.RunAt, j.Attempt = queue.StatePending, now, j.Attempt-1
				if p.RetryIn > 0 {
					j.State, j.RunAt = queue.StateScheduled, now.Add(p.RetryIn)
				}
			case queue.OutcomeReleased:
				j.State, j.Attempt = queue.StatePending, j.Attempt-1
			case queue.OutcomeWaiting:
				j.State, j.Attempt = queue.StateWaiting, j.Attempt-1
				if st.open[j.ID] == 0 {
					j.State = queue.StatePending
				}
			default:
				return fmt.Errorf("%w: outcome %q", queue.ErrInvalid, p.Outcome)
			}
			if j.State.Finished() {
				st.ended(j, now, notify)
			}
			notify(driver.TopicChange, j.Queue)
		}
		return nil
	})
	return out, err
}

func (x *memExec) JobCancel(_ context.Context, p *driver.JobCancelParams) (*queue.Job, error) {
	var out *queue.Job
	err := x.write(func(st *memState, notify func(string, string)) error {
		j := st.jobs[p.ID]
		if j == nil || (p.TenantID != "" && j.TenantID != p.TenantID) {
			return queue.ErrNotFound
		}
		if j.State.Finished() {
			return queue.ErrConflict
		}
		st.cancel(j, p, time.Now(), notify)
		out = copyJob(j)
		return nil
	})
	return out, err
}

// cancel cancels j, which is not finished, and its unfinished children.
func (s *memState) cancel(j *queue.Job, p *driver.JobCancelParams, now time.Time, notify func(string, string)) {
	for _, c := range s.sorted() {
		if c.ParentID == j.ID && !c.State.Finished() {
			s.cancel(c, p, now, notify)
		}
	}
	if j.State == queue.StateRunning {
		if s.holds == nil {
			s.holds = make(map[queue.Lease]memHold)
		}
		s.holds[j.Lease()] = memHold{tenant: j.TenantID, queue: j.Queue, expires: j.LeaseExpiresAt}
		notify(driver.TopicCancel, strconv.FormatInt(j.ID, 10))
		s.endAttempt(j, queue.OutcomeCancelled, p.Reason, "", now)
	}
	j.State, j.CompletedAt, j.UpdatedAt = queue.StateCancelled, now, now
	if p.Discard {
		j.State, j.ErrorMessage = queue.StateFailed, cmp.Or(p.Reason, "discarded")
	}
	s.ended(j, now, notify)
	notify(driver.TopicChange, j.Queue)
}

// holding reports whether a cancelled attempt of job id holds a slot.
func (s *memState) holding(id int64) bool {
	for l := range s.holds {
		if l.JobID == id {
			return true
		}
	}
	return false
}

func (x *memExec) JobSlotRelease(_ context.Context, leases []queue.Lease) (int, error) {
	n := 0
	err := x.write(func(st *memState, _ func(string, string)) error {
		for _, l := range leases {
			if _, ok := st.holds[l]; ok {
				delete(st.holds, l)
				n++
			}
		}
		return nil
	})
	return n, err
}

func (x *memExec) JobRetry(_ context.Context, p *driver.JobRetryParams) (*queue.Job, error) {
	var out *queue.Job
	err := x.write(func(st *memState, notify func(string, string)) error {
		j := st.jobs[p.ID]
		if j == nil || (p.TenantID != "" && j.TenantID != p.TenantID) {
			return queue.ErrNotFound
		}
		if j.State != queue.StateFailed && j.State != queue.StateCancelled {
			return queue.ErrConflict
		}
		now := time.Now()
		if len(st.children(j.ID)) > 0 {
			st.reopen(j, now, notify)
			out = copyJob(j)
			return nil
		}
		st.nextID++
		out = &queue.Job{
			ID: st.nextID, Queue: j.Queue, Kind: j.Kind, TenantID: j.TenantID, Args: j.Args,
			State: queue.StatePending, Priority: j.Priority, MaxAttempts: j.MaxAttempts, RunAt: now,
			RetryOf: j.ID, FailOnTimeout: j.FailOnTimeout, Cost: j.Cost, Metadata: maps.Clone(j.Metadata), CreatedAt: now, UpdatedAt: now,
		}
		st.jobs[out.ID] = copyJob(out)
		notify(driver.TopicInsert, j.Queue)
		return nil
	})
	return out, err
}

// reopen re-opens the failed or cancelled workflow parent j: its failed
// and cancelled children run again, and it waits for its unfinished ones.
func (s *memState) reopen(j *queue.Job, now time.Time, notify func(string, string)) {
	open := 0
	for _, c := range s.sorted() {
		if c.ParentID != j.ID {
			continue
		}
		switch {
		case c.State == queue.StateFailed || c.State == queue.StateCancelled:
			if len(s.children(c.ID)) > 0 {
				s.reopen(c, now, notify)
			} else {
				s.requeue(c, now, notify)
			}
			open++
		case !c.State.Finished():
			open++
		}
	}
	s.open[j.ID] = open
	s.requeue(j, now, notify)
	if open > 0 {
		j.State = queue.StateWaiting
	}
}

// requeue makes the finished job j pending again with its attempts reset
// (its budget raised instead while a cancelled attempt holds its slot).
func (s *memState) requeue(j *queue.Job, now time.Time, notify func(string, string)) {
	if s.holding(j.ID) {
		j.MaxAttempts += j.Attempt
	} else {
		j.Attempt = 0
	}
	j.State, j.ErrorMessage, j.RunAt = queue.StatePending, "", now
	j.CompletedAt, j.UpdatedAt = time.Time{}, now
	notify(driver.TopicInsert, j.Queue)
}

func (x *memExec) JobPosition(_ context.Context, id int64) (*driver.Position, error) {
	var out *driver.Position
	err := x.read(func(st *memState) error {
		j := st.jobs[id]
		if j == nil {
			return queue.ErrNotFound
		}
		if j.State != queue.StatePending && j.State != queue.StateScheduled {
			return queue.ErrConflict
		}
		out = &driver.Position{Running: st.running(j.TenantID, j.Queue), Limit: st.limit(j.TenantID, j.Queue)}
		_, queuePaused := st.pausedQueues[j.Queue]
		_, tenantPaused := st.pausedTenants[j.TenantID]
		out.Paused = queuePaused || tenantPaused
		var total time.Duration
		n := 0
		for _, o := range st.jobs {
			if o.Queue == j.Queue && o.State == queue.StateCompleted {
				total += o.CompletedAt.Sub(o.StartedAt)
				n++
			}
			if o.Queue != j.Queue || o.TenantID != j.TenantID || o.State != queue.StatePending || o.ID == j.ID {
				continue
			}
			if j.State == queue.StateScheduled || o.Priority > j.Priority || (o.Priority == j.Priority && o.ID < j.ID) {
				out.Ahead++
			}
		}
		if n > 0 {
			out.AvgDuration = total / time.Duration(n)
		}
		return nil
	})
	return out, err
}

func (x *memExec) JobAttempts(_ context.Context, id int64) ([]*queue.Attempt, error) {
	var out []*queue.Attempt
	err := x.read(func(st *memState) error {
		for _, a := range st.attempts[id] {
			c := *a
			out = append(out, &c)
		}
		return nil
	})
	return out, err
}

func (x *memExec) JobRescue(_ context.Context, p *driver.JobRescueParams) ([]*queue.Job, error) {
	var out []*queue.Job
	err := x.write(func(st *memState, notify func(string, string)) error {
		now := time.Now()
		for l, h := range st.holds {
			if h.expires.Before(now) {
				delete(st.holds, l)
			}
		}
		for _, j := range st.sorted() {
			if len(out) == p.Limit {
				break
			}
			if j.State != queue.StateRunning || !j.LeaseExpiresAt.Before(now) {
				continue
			}
			st.endAttempt(j, queue.OutcomeTimedOut, "Processing timed out", "", now)
			if j.Attempt < j.MaxAttempts && !j.FailOnTimeout {
				j.State = queue.StatePending
				notify(driver.TopicInsert, j.Queue)
			} else {
				j.State, j.ErrorMessage, j.CompletedAt = queue.StateFailed, "Processing timed out", now
				st.ended(j, now, notify)
			}
			out = append(out, copyJob(j))
		}
		return nil
	})
	return out, err
}

func (s *memState) sorted() []*queue.Job {
	jobs := slices.Collect(func(yield func(*queue.Job) bool) {
		for _, j := range s.jobs {
			if !yield(j) {
				return
			}
		}
	})
	slices.SortFunc(jobs, func(a, b *queue.Job) int { return cmp.Compare(a.ID, b.ID) })
	return jobs
}

func (x *memExec) JobSchedule(_ context.Context, p *driver.JobScheduleParams) (int, error) {
	n := 0
	err := x.write(func(st *memState, notify func(string, string)) error {
		now := time.Now()
		for _, j := range st.sorted() {
			if n < p.Limit && j.State == queue.StateScheduled && !j.RunAt.After(now) {
				j.State, j.UpdatedAt = queue.StatePending, now
				notify(driver.TopicInsert, j.Queue)
				n++
			}
		}
		return nil
	})
	return n, err
}

func (x *memExec) JobDeleteFinished(_ context.Context, p *driver.JobDeleteFinishedParams) (int, error) {
	n := 0
	err := x.write(func(st *memState, _ func(string, string)) error {
		now := time.Now()
		ages := map[queue.State]time.Duration{
			queue.StateCompleted: p.CompletedAge, queue.StateFailed: p.FailedAge, queue.StateCancelled: p.CancelledAge,
		}
		for _, j := range st.sorted() {
			if age, ok := ages[j.State]; ok && n < p.Limit && now.Sub(j.CompletedAt) > age && !st.holding(j.ID) {
				delete(st.jobs, j.ID)
				delete(st.attempts, j.ID)
				n++
			}
		}
		return nil
	})
	return n, err
}

func (x *memExec) TenantLimitSet(_ context.Context, p *driver.TenantLimitParams) error {
	if err := driver.ValidateLimit("tenant limit", p.MaxRunning, 0); err != nil {
		return err
	}
	return x.write(func(st *memState, _ func(string, string)) error {
		k := tenantQueue{p.TenantID, p.Queue}
		if p.MaxRunning == 0 {
			delete(st.tenantLimits, k)
		} else {
			st.tenantLimits[k] = p.MaxRunning
		}
		return nil
	})
}

func (x *memExec) TenantWeightSet(_ context.Context, p *driver.TenantWeightParams) error {
	if err := driver.ValidateLimit("tenant weight", p.Weight, 0); err != nil {
		return err
	}
	return x.write(func(st *memState, _ func(string, string)) error {
		if p.Weight == 0 {
			delete(st.weights, p.TenantID)
		} else {
			st.weights[p.TenantID] = p.Weight
		}
		return nil
	})
}

func (x *memExec) QueueConfigSet(_ context.Context, p *driver.QueueConfigParams) error {
	if err := driver.ValidateLimit("default tenant limit", p.DefaultTenantLimit, 1); err != nil {
		return err
	}
	return x.write(func(st *memState, _ func(string, string)) error {
		st.queueLimits[p.Queue] = p.DefaultTenantLimit
		return nil
	})
}

func (x *memExec) LeaderAttempt(_ context.Context, p *driver.LeaderParams) (bool, error) {
	ok := false
	err := x.write(func(st *memState, _ func(string, string)) error {
		now := time.Now()
		if l, held := st.leaders[p.Name]; held && l.id != p.LeaderID && l.expires.After(now) {
			return nil
		}
		st.leaders[p.Name], ok = memLeader{id: p.LeaderID, expires: now.Add(p.TTL)}, true
		return nil
	})
	return ok, err
}

func (x *memExec) LeaderResign(_ context.Context, p *driver.LeaderParams) error {
	return x.write(func(st *memState, _ func(string, string)) error {
		if st.leaders[p.Name].id == p.LeaderID {
			delete(st.leaders, p.Name)
		}
		return nil
	})
}

func (x *memExec) QueueStats(_ context.Context, q string) (*queue.QueueStats, error) {
	out := &queue.QueueStats{Queue: q, Counts: make(map[queue.State]int)}
	err := x.read(func(st *memState) error {
		now := time.Now()
		_, out.Paused = st.pausedQueues[q]
		for _, j := range st.jobs {
			if j.Queue != q {
				continue
			}
			out.Counts[j.State]++
			if j.State == queue.StatePending {
				out.OldestPendingAge = max(out.OldestPendingAge, now.Sub(j.RunAt))
			}
		}
		return nil
	})
	return out, err
}
