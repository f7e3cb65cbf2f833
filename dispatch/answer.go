package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/docketq/docket/queue"
)

// answer turns an endpoint's answer into the attempt's outcome:
//
//	2xx (not 202)     completed with the body (JSON, or empty) as the result
//	202               the endpoint ends the attempt through the API (wait)
//	410               failed for good (this job only)
//	429, 503          snoozed for Retry-After when given, else retried
//	408, 425, 5xx     retried with backoff
//	3xx               failed for good: redirects are not followed
//	other 4xx         failed for good: the endpoint refuses the job
func (ep *endpoint) answer(ctx context.Context, t *queue.Task, resp *http.Response) error {
	code := resp.StatusCode
	switch {
	case code == http.StatusAccepted:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResultBytes))
		return ep.wait(ctx, t)
	case code >= 200 && code < 300:
		return setResult(t, resp)
	case code == http.StatusGone:
		return queue.Permanent(fmt.Errorf("dispatch %s: %w", ep.Kind, ErrGone))
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		if d, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			return queue.Snooze(max(d, MinRetryAfter))
		}
		return statusError(ep.Kind, resp)
	case code == http.StatusRequestTimeout || code == http.StatusTooEarly || code >= 500:
		return statusError(ep.Kind, resp)
	case code >= 300 && code < 400:
		return queue.Permanent(fmt.Errorf("dispatch %s: endpoint answered %d (Location on %s); redirects are not followed",
			ep.Kind, code, locationOrigin(resp)))
	}
	return queue.Permanent(statusError(ep.Kind, resp))
}

// locationOrigin is the scheme and host of a redirect's Location: its
// path and query are the endpoint's and may be as secret as its own.
func locationOrigin(resp *http.Response) string {
	loc, err := resp.Location()
	if err != nil {
		return "no valid location"
	}
	return loc.Scheme + "://" + loc.Host
}

// setResult stores a synchronous answer's JSON body as the job's result.
func setResult(t *queue.Task, resp *http.Response) error {
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxResultBytes+1))
	if err != nil {
		return fmt.Errorf("dispatch: read the answer: %w", err)
	}
	if len(b) > MaxResultBytes {
		return queue.Permanent(fmt.Errorf("dispatch: answer over %d bytes", MaxResultBytes))
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	if !json.Valid(b) {
		return fmt.Errorf("dispatch: the endpoint answered %d with a body that is not JSON", resp.StatusCode)
	}
	t.SetResult(b)
	return nil
}

// statusError is the error of an answer, with the start of its body.
func statusError(kind string, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	msg := strings.TrimSpace(string(b))
	if msg == "" {
		return fmt.Errorf("dispatch %s: endpoint answered %d", kind, resp.StatusCode)
	}
	return fmt.Errorf("dispatch %s: endpoint answered %d: %s", kind, resp.StatusCode, msg)
}

// retryAfter reads a Retry-After header: seconds or an HTTP date, capped
// at MaxRetryAfter.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	var d time.Duration
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		if n < 0 {
			return 0, false
		}
		d = time.Duration(n) * time.Second
	} else if at, err := http.ParseTime(v); err == nil {
		d = max(at.Sub(now), 0)
	} else {
		return 0, false
	}
	return min(d, MaxRetryAfter), true
}

// wait holds the attempt while the endpoint works on it asynchronously:
// the worker keeps renewing the lease, and the job is read every
// PollInterval until the endpoint has ended the attempt through the API.
// The worker then stores nothing more (Task.EndedBy).
func (ep *endpoint) wait(ctx context.Context, t *queue.Task) error {
	t.AwaitEnd()
	tick := time.NewTicker(ep.d.cfg.PollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			cause := context.Cause(ctx)
			if !errors.Is(cause, queue.ErrLeaseLost) {
				return cause // timeout or shutdown: the worker decides
			}
			// The lease is gone: find out whether the endpoint ended it.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if done, err := ep.ended(rctx, t); err == nil && done {
				return nil
			}
			return cause
		case <-tick.C:
		}
		if done, err := ep.ended(ctx, t); err != nil {
			ep.d.logger.Warn("dispatch: reading a job the endpoint works on", "job_id", t.Job.ID, "error", err)
		} else if done {
			return nil
		}
	}
}

// ended reports whether the attempt was ended by its endpoint, and if so
// tells the task how.
func (ep *endpoint) ended(ctx context.Context, t *queue.Task) (bool, error) {
	j, err := ep.d.cfg.Client.Get(ctx, t.Job.ID)
	if err != nil {
		return false, fmt.Errorf("read job: %w", err)
	}
	if j.State == queue.StateRunning && j.Attempt == t.Job.Attempt && j.LeaseToken == t.Lease().Token {
		return false, nil
	}
	atts, err := ep.d.cfg.Client.Attempts(ctx, t.Job.ID)
	if err != nil {
		return false, fmt.Errorf("read attempts: %w", err)
	}
	for i := len(atts) - 1; i >= 0; i-- { // the latest record of this attempt number (a snooze reuses it)
		a := atts[i]
		if a.Attempt != t.Job.Attempt {
			continue
		}
		switch a.Outcome {
		case queue.OutcomeCompleted, queue.OutcomeRetry, queue.OutcomeFailed, queue.OutcomeSnoozed:
			t.EndedBy(a.Outcome, a.Error)
			return true, nil
		}
		return false, nil
	}
	return false, nil // rescued or cancelled: the lease is lost
}
