package queue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/docketq/docket/queue/driver"
)

// Step is one child job of a workflow, started by Task.Spawn: a name,
// unique among the steps of its parent, and the job's enqueue params. A
// step runs in its parent's tenant: TenantID is left empty (or is the
// parent's), and UniqueKey is left empty (the step's key is derived from
// its parent and its name, driver.StepKey). An empty Queue is the
// parent's.
type Step struct {
	Name string // 1-200 bytes
	EnqueueParams
}

// MaxStepNameBytes caps Step.Name.
const MaxStepNameBytes = 200

// errAwaitChildren is the error AwaitChildren returns.
var errAwaitChildren = errors.New("awaiting children")

// AwaitChildren returns an error that ends the attempt of a workflow
// parent without spending it (OutcomeWaiting): the job waits, holding no
// slot of its tenant, until every child it spawned has finished
// (completed, failed or cancelled), and then runs again, when it reads
// their results with Task.Children. If they have all finished already, it
// is pending again at once. Return it from the handler as it is.
func AwaitChildren() error { return errAwaitChildren }

// Spawn starts steps as child jobs of the running job, in its tenant, and
// returns them in order. It is fenced: the children are inserted only while
// this attempt holds its lease (else ErrLeaseLost, and none is inserted),
// in one transaction. It is idempotent per step name: a step its job
// spawned before (in an earlier attempt, or before a Client.Retry of the
// job) is not started again, and its result has Duplicate set and the
// child as it is now, finished or not. Spawning a finished step does not
// run it again; Client.Retry of the failed parent does.
func (t *Task) Spawn(ctx context.Context, steps ...*Step) ([]InsertResult, error) {
	if len(steps) == 0 {
		return nil, nil
	}
	params := make([]*driver.JobInsertParams, len(steps))
	for i, s := range steps {
		switch {
		case s == nil:
			return nil, fmt.Errorf("%w: step %d of %d is nil", ErrInvalid, i+1, len(steps))
		case s.Name == "" || len(s.Name) > MaxStepNameBytes || !storable(s.Name):
			return nil, fmt.Errorf("%w: step name %q: must be 1-%d bytes of UTF-8 without NUL", ErrInvalid, s.Name, MaxStepNameBytes)
		case s.UniqueKey != "":
			return nil, fmt.Errorf("%w: step %q has a unique key: its name is its key", ErrInvalid, s.Name)
		case s.TenantID != "" && s.TenantID != t.Job.TenantID:
			return nil, fmt.Errorf("%w: step %q is for tenant %q: a step runs in its parent's", ErrInvalid, s.Name, s.TenantID)
		case slices.IndexFunc(steps[:i], func(o *Step) bool { return o.Name == s.Name }) >= 0:
			return nil, fmt.Errorf("%w: step name %q given twice", ErrInvalid, s.Name)
		}
		ep := s.EnqueueParams
		ep.TenantID, ep.UniqueKey = t.Job.TenantID, driver.StepKey(t.Job.ID, s.Name)
		ep.Queue = cmp.Or(ep.Queue, t.Job.Queue)
		ip, err := ep.toInsert()
		if err != nil {
			return nil, fmt.Errorf("step %q: %w", s.Name, err)
		}
		params[i] = ip
	}
	res, err := t.w.exec.JobSpawn(ctx, &driver.JobSpawnParams{Lease: t.lease, Children: params})
	if err != nil {
		if isLeaseLost(err) {
			t.markLost()
		}
		return nil, fmt.Errorf("spawn: %w", err)
	}
	var started []*Job
	for _, r := range res {
		if !r.Duplicate {
			started = append(started, r.Job)
		}
	}
	t.w.client.inserted(false, started...)
	return res, nil
}

// Children returns the jobs the running job spawned (Spawn), in the order
// they were spawned, as they are now: a finished step's Result, state and
// error are its. Job.StepName names each one's step.
func (t *Task) Children(ctx context.Context) ([]*Job, error) {
	jobs, err := t.w.exec.JobChildren(ctx, t.Job.ID)
	if err != nil {
		return nil, fmt.Errorf("children of job %d: %w", t.Job.ID, err)
	}
	return jobs, nil
}

// Child returns the child of the running job spawned as the step named
// name, or ErrNotFound.
func (t *Task) Child(ctx context.Context, name string) (*Job, error) {
	jobs, err := t.Children(ctx)
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		if j.StepName() == name {
			return j, nil
		}
	}
	return nil, fmt.Errorf("step %q of job %d: %w", name, t.Job.ID, ErrNotFound)
}

// Children returns the jobs a workflow parent spawned, in spawn order.
func (c *Client) Children(ctx context.Context, id int64) ([]*Job, error) {
	jobs, err := c.exec.JobChildren(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("children of job %d: %w", id, err)
	}
	return jobs, nil
}
