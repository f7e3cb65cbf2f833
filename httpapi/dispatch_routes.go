package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/dispatch"
	"github.com/docketq/docket/queue"
)

// dispatchRoutes are the routes of HTTP dispatch (docs/dispatch.md): a
// tenant enqueues a job of a dispatched kind; the endpoint working on it
// reports progress and its outcome with the attempt's lease token, not a
// tenant key (access public: the token is checked here, and every write
// is fenced by the store like a worker's).
func (s *Server) dispatchRoutes() []route {
	return []route{
		{"POST", "/v1/dispatch/jobs", tenant, s.dispatchEnqueue},
		{"POST", "/v1/dispatch/jobs/{id}/progress", public, s.dispatchProgress},
		{"POST", "/v1/dispatch/jobs/{id}/complete", public, s.dispatchComplete},
		{"POST", "/v1/dispatch/jobs/{id}/fail", public, s.dispatchFail},
	}
}

// dispatchBackoff is the retry delay of a failure an endpoint reports
// without retry_after_seconds: the worker's default.
var dispatchBackoff = queue.ExponentialBackoff(2*time.Second, time.Hour)

type dispatchEnqueueRequest struct {
	Kind        string          `json:"kind"`
	Args        json.RawMessage `json:"args"`
	MaxAttempts int             `json:"max_attempts"`
	UniqueKey   string          `json:"unique_key"`
}

// errDuplicateJob rolls back an enqueue whose unique_key names a job
// already stored: nothing new is stored, and no rate-limit slot is taken.
var errDuplicateJob = errors.New("unique key names a stored job")

// dispatchEnqueue serves POST /v1/dispatch/jobs. A new job takes a slot
// of the tenant's rate-limit window, the one uploads take, in the
// transaction that stores it (429 with Retry-After when none is free);
// a repeat of an enqueue with its unique_key answers with its job and
// takes none. Args over the dispatcher's cap are a 413.
func (s *Server) dispatchEnqueue(w http.ResponseWriter, r *http.Request) error {
	var req dispatchEnqueueRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if !slices.Contains(s.dispatchKinds(), req.Kind) {
		return errorf(http.StatusBadRequest, "kind %q is not dispatched to an endpoint (configured: %v)", req.Kind, s.dispatchKinds())
	}
	if req.MaxAttempts < 0 || req.MaxAttempts > 100 {
		return errorf(http.StatusBadRequest, "max_attempts %d: want 0 (default) to 100", req.MaxAttempts)
	}
	if len(req.UniqueKey) > 200 {
		return errorf(http.StatusBadRequest, "unique_key: at most 200 bytes")
	}
	args := req.Args
	if len(args) == 0 {
		args = json.RawMessage("null")
	}
	if limit := s.cfg.Dispatch.MaxArgsBytes(); len(args) > limit {
		return errorf(http.StatusRequestEntityTooLarge, "args are %d bytes of JSON; a job's args may be at most %d", len(args), limit)
	}
	ctx, t := r.Context(), tenantOf(r)
	p := &queue.EnqueueParams{
		Queue: dispatch.Queue, Kind: req.Kind, TenantID: t.ID, Args: args,
		MaxAttempts: req.MaxAttempts, UniqueKey: req.UniqueKey,
	}
	var res *queue.InsertResult
	err := s.cfg.Store.InTenant(ctx, t.ID, func(tx docket.Tx) error {
		var err error
		if res, err = s.cfg.Queue.EnqueueTx(ctx, tx.Native(), p); err != nil {
			return err
		}
		if res.Duplicate {
			return errDuplicateJob
		}
		rl, err := tx.RateLimitTake(ctx, rateParams(t))
		if err != nil {
			return err
		}
		if !rl.Allowed {
			return rateLimited(rl)
		}
		return nil
	})
	var refused *httpError
	switch {
	case errors.Is(err, errDuplicateJob):
	case errors.As(err, &refused):
		return refused
	case err != nil:
		return fmt.Errorf("enqueue: %w", err)
	default:
		s.cfg.Queue.PublishInserted(res.Job) // after the commit: EnqueueTx does not
	}
	w.Header().Set("Location", "/v1/jobs/"+strconv.FormatInt(res.Job.ID, 10))
	return writeJSON(w, http.StatusAccepted, map[string]JobView{"job": jobView(res.Job, -1)})
}

// dispatchKinds are the kinds the server's dispatcher sends to endpoints.
func (s *Server) dispatchKinds() []string {
	if s.cfg.Dispatch == nil {
		return nil
	}
	return s.cfg.Dispatch.Kinds()
}

var (
	errNoLeaseToken = &httpError{status: http.StatusUnauthorized, title: "Unauthorized",
		detail: "missing or invalid lease token: send Authorization: Bearer <data.callback.token of the dispatched job>"}
	errLeaseNotHeld = &httpError{status: http.StatusConflict, title: "Conflict",
		detail: "the lease is not held: the attempt has ended (completed, failed, timed out, cancelled)"}
)

// dispatchLease reads the job id and lease token of a callback and checks
// that the token was issued for this job (its MAC, dispatch.CheckToken,
// checked before the store is read) and names its running attempt: 401
// for a token that is not this job's, counted with the failed
// authentications of the client's address; 409 for one whose attempt has
// ended. The writes that follow are fenced by the store all the same.
func (s *Server) dispatchLease(r *http.Request) (*queue.Job, queue.Lease, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return nil, queue.Lease{}, errorf(http.StatusNotFound, "job id %q: want a positive integer", r.PathValue("id"))
	}
	if err := s.throttled(r, ""); err != nil {
		return nil, queue.Lease{}, err
	}
	tok, _ := bearer(r)
	var (
		lease queue.Lease
		kind  string
	)
	for _, k := range s.dispatchKinds() {
		if l, err := s.cfg.Dispatch.CheckToken(k, id, tok); err == nil {
			lease, kind = l, k
			break
		}
	}
	if kind == "" {
		s.failed(r, "")
		return nil, queue.Lease{}, errNoLeaseToken
	}
	j, err := s.cfg.Queue.Get(r.Context(), id)
	switch {
	case errors.Is(err, docket.ErrNotFound):
		return nil, queue.Lease{}, errLeaseNotHeld
	case err != nil:
		return nil, queue.Lease{}, fmt.Errorf("read job: %w", err)
	case j.Kind != kind:
		// Kinds sharing a secret: the token names the job, not its kind.
		if _, err := s.cfg.Dispatch.CheckToken(j.Kind, id, tok); err != nil {
			s.failed(r, "")
			return nil, queue.Lease{}, errNoLeaseToken
		}
	}
	if j.State != queue.StateRunning || j.Lease() != lease {
		return nil, queue.Lease{}, errLeaseNotHeld
	}
	return j, lease, nil
}

type dispatchProgressRequest struct {
	Stage   string `json:"stage"`
	Percent int    `json:"percent"`
	Message string `json:"message"`
}

func (s *Server) dispatchProgress(w http.ResponseWriter, r *http.Request) error {
	_, lease, err := s.dispatchLease(r)
	if err != nil {
		return err
	}
	var req dispatchProgressRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if len(req.Stage) > 64 || len(req.Message) > 1000 || req.Percent < 0 || req.Percent > 100 {
		return errorf(http.StatusBadRequest, "stage at most 64 bytes, message at most 1000, percent 0 to 100")
	}
	err = s.cfg.Queue.ProgressLease(r.Context(), lease, req.Stage, req.Percent, req.Message)
	if errors.Is(err, queue.ErrLeaseLost) {
		return errLeaseNotHeld
	}
	if err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type dispatchCompleteRequest struct {
	Result json.RawMessage `json:"result"`
}

func (s *Server) dispatchComplete(w http.ResponseWriter, r *http.Request) error {
	_, lease, err := s.dispatchLease(r)
	if err != nil {
		return err
	}
	var req dispatchCompleteRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	return s.dispatchFinish(w, r, &queue.FinishLeaseParams{Lease: lease, Outcome: queue.OutcomeCompleted, Result: req.Result})
}

type dispatchFailRequest struct {
	Error string `json:"error"`
	// Retry asks for another attempt while attempts remain.
	Retry bool `json:"retry"`
	// RetryAfterSeconds overrides the backoff of a retry.
	RetryAfterSeconds *int `json:"retry_after_seconds"`
}

func (s *Server) dispatchFail(w http.ResponseWriter, r *http.Request) error {
	j, lease, err := s.dispatchLease(r)
	if err != nil {
		return err
	}
	var req dispatchFailRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.Error == "" || len(req.Error) > 2000 {
		return errorf(http.StatusBadRequest, "error: a message of 1 to 2000 bytes")
	}
	p := &queue.FinishLeaseParams{Lease: lease, Outcome: queue.OutcomeFailed, Error: req.Error}
	if req.Retry && j.Attempt < j.MaxAttempts {
		p.Outcome, p.RetryIn = queue.OutcomeRetry, dispatchBackoff(j.Attempt)
		if sec := req.RetryAfterSeconds; sec != nil {
			if *sec < 0 || *sec > 86400 {
				return errorf(http.StatusBadRequest, "retry_after_seconds %d: want 0 to 86400", *sec)
			}
			p.RetryIn = time.Duration(*sec) * time.Second
		}
	}
	return s.dispatchFinish(w, r, p)
}

// dispatchFinish ends the attempt with the lease and answers with the job
// as it is now.
func (s *Server) dispatchFinish(w http.ResponseWriter, r *http.Request, p *queue.FinishLeaseParams) error {
	p.WorkerID = "dispatch-endpoint"
	err := s.cfg.Queue.FinishLease(r.Context(), p)
	if errors.Is(err, queue.ErrLeaseLost) {
		return errLeaseNotHeld
	}
	if err != nil {
		return err
	}
	j, err := s.cfg.Queue.Get(r.Context(), p.Lease.JobID)
	if err != nil {
		return fmt.Errorf("read job: %w", err)
	}
	return writeJSON(w, http.StatusOK, map[string]JobView{"job": jobView(j, -1)})
}
