package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/docketq/docket"
	"github.com/docketq/docket/dispatch"
	"github.com/docketq/docket/queue"
)

// Pause and resume of queues and tenants (docs/operations.md): a paused
// queue or tenant gets no new claims in any worker process; running jobs
// finish, uploads are still accepted and wait in order.

// QueuePauseView answers a queue's pause or resume.
type QueuePauseView struct {
	Queue  string `json:"queue"`
	Paused bool   `json:"paused"`
}

// TenantPauseView answers a tenant's pause or resume.
type TenantPauseView struct {
	TenantID string `json:"tenant_id"`
	Paused   bool   `json:"paused"`
}

// adminQueuePause pauses or resumes a queue: 200 {queue, paused}; 404 for
// a queue that is not known (CheckQueueKnown), so that a misspelt name
// pauses nothing. The pause stays until resumed.
func (s *Server) adminQueuePause(paused bool) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		name := r.PathValue("queue")
		if queue.ValidateQueueName(name) != nil {
			return errorf(http.StatusBadRequest, "queue name %q: want 1-63 of a-z, 0-9, '_', '.' and '-', starting with a letter or digit", name)
		}
		err := CheckQueueKnown(r.Context(), s.cfg.Store, s.cfg.Queue, name)
		var unknown *UnknownQueueError
		if errors.As(err, &unknown) {
			return errorf(http.StatusNotFound, "%s", unknown.Error())
		}
		if err != nil {
			return err
		}
		if paused {
			err = s.cfg.Queue.PauseQueue(r.Context(), name)
		} else {
			err = s.cfg.Queue.ResumeQueue(r.Context(), name)
		}
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, QueuePauseView{Queue: name, Paused: paused})
	}
}

// ConfiguredQueues are the queues Docket's own workers serve: document
// jobs and dispatched jobs. They are known whether they have jobs or not.
var ConfiguredQueues = []string{docket.DocumentQueue, dispatch.Queue}

// UnknownQueueError is CheckQueueKnown's answer for a queue that is not
// known; it names the known ones.
type UnknownQueueError struct {
	Queue string
	Known []string
}

func (e *UnknownQueueError) Error() string {
	return fmt.Sprintf("no queue %q; known queues: %s", e.Queue, strings.Join(e.Known, ", "))
}

// healthReader reads the monitoring views (a docket.Store).
type healthReader interface {
	HealthGet(ctx context.Context, p *docket.HealthParams) (*docket.Health, error)
}

// CheckQueueKnown returns an *UnknownQueueError unless name is a known
// queue, one that may be paused and resumed: a configured queue
// (ConfiguredQueues), a queue with at least one job in the store (in any
// state) or a queue paused now (so that any pause can be resumed). The
// error names the configured and paused queues and those with waiting or
// running jobs (for the CLI too).
func CheckQueueKnown(ctx context.Context, store healthReader, c *queue.Client, name string) error {
	p, err := c.Pauses(ctx)
	if err != nil {
		return err
	}
	if slices.Contains(ConfiguredQueues, name) || p.QueuePaused(name) {
		return nil
	}
	jobs, err := c.List(ctx, &queue.JobListParams{Queue: name, Limit: 1})
	if err != nil {
		return err
	}
	if len(jobs) > 0 {
		return nil
	}
	known := slices.Clone(ConfiguredQueues)
	for q := range p.Queues {
		known = append(known, q)
	}
	h, err := store.HealthGet(ctx, &docket.HealthParams{Limit: 1, SkipPerformance: true, SkipFinished: true})
	if err != nil {
		return err
	}
	for _, r := range h.Queues {
		known = append(known, r.Queue)
	}
	slices.Sort(known)
	return &UnknownQueueError{Queue: name, Known: slices.Compact(known)}
}

// adminTenantPause pauses or resumes a tenant in every queue: 200
// {tenant_id, paused}; 404 for an unknown tenant.
func (s *Server) adminTenantPause(paused bool) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		t, err := s.cfg.Store.TenantGet(r.Context(), r.PathValue("id"))
		if err != nil {
			return err
		}
		if paused {
			err = s.cfg.Queue.PauseTenant(r.Context(), t.ID)
		} else {
			err = s.cfg.Queue.ResumeTenant(r.Context(), t.ID)
		}
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, TenantPauseView{TenantID: t.ID, Paused: paused})
	}
}

// markTenantsPaused sets Paused on tenant views from the store's pauses.
func (s *Server) markTenantsPaused(ctx context.Context, views ...*TenantView) error {
	p, err := s.cfg.Queue.Pauses(ctx)
	if err != nil {
		return err
	}
	for _, v := range views {
		v.Paused = p.TenantPaused(v.ID)
	}
	return nil
}

// markHealthPaused marks the monitoring views with the store's pauses.
func (s *Server) markHealthPaused(ctx context.Context, v *HealthView) error {
	p, err := s.cfg.Queue.Pauses(ctx)
	if err != nil {
		return err
	}
	MarkPaused(v, p)
	return nil
}

// MarkPaused sets Paused on the queue rows and queue-depth rows of the
// monitoring views and lists the paused queues (those with no jobs too),
// as GET /v1/admin/health shows them (for the CLI).
func MarkPaused(v *HealthView, p *queue.Pauses) {
	for i := range v.QueueHealth {
		v.QueueHealth[i].Paused = p.QueuePaused(v.QueueHealth[i].Queue)
	}
	for i := range v.QueueDepth.Tenants {
		d := &v.QueueDepth.Tenants[i]
		d.Paused = p.QueuePaused(d.Queue) || p.TenantPaused(d.TenantID)
	}
	v.PausedQueues = make([]string, 0, len(p.Queues))
	for q := range p.Queues {
		v.PausedQueues = append(v.PausedQueues, q)
	}
	slices.Sort(v.PausedQueues)
}

// jobWait returns j with where it stands when it waits (nil otherwise). A
// job that left the queue meanwhile is read again.
func (s *Server) jobWait(ctx context.Context, j *queue.Job) (*queue.Job, *queue.QueuePosition, error) {
	if j.State != queue.StatePending && j.State != queue.StateScheduled {
		return j, nil, nil
	}
	p, err := s.cfg.Queue.Position(ctx, j.ID)
	switch {
	case err == nil:
		return j, p, nil
	case errors.Is(err, docket.ErrConflict):
		j, err := s.cfg.Queue.Get(ctx, j.ID)
		return j, nil, err
	}
	return nil, nil, err
}

// jobStatusView renders a job of the jobs API with its queue position and
// whether it waits on a paused queue or tenant.
func (s *Server) jobStatusView(ctx context.Context, j *queue.Job) (JobView, error) {
	j, p, err := s.jobWait(ctx, j)
	if err != nil {
		return JobView{}, err
	}
	if p == nil {
		return jobView(j, -1), nil
	}
	v := jobView(j, p.Ahead)
	v.Paused = p.Paused
	return v, nil
}
