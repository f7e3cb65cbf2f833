package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/docketq/docket/queue"
)

// kindSink is the job kind of the fenced external sink (the SIGSTOP
// scenario, chaos/sigstop_test.go).
const kindSink = "sink"

// errFenced is a write the sink refused: a higher attempt of the job wrote
// first.
var errFenced = errors.New("the sink refused the write: a later attempt of the job wrote first")

// sink records the execution, sleeps without honouring its context (a
// handler that does not cooperate), writes (job, attempt) to the external
// sink at -sink-url, which refuses attempts lower than the highest it has
// seen, then stores its effect and completes the job in one transaction.
func (h *handlers) sink(ctx context.Context, t *queue.Task) error {
	if err := h.record(ctx, t); err != nil {
		return err
	}
	time.Sleep(argSleep(t, h.cfg.sleep)) // deliberately deaf to ctx
	if err := h.writeSink(t); err != nil {
		return err
	}
	return h.complete(ctx, t)
}

// writeSink posts the job's id and attempt to the sink. It ignores the
// handler's context, as a late write of a stalled process would.
func (h *handlers) writeSink(t *queue.Task) error {
	q := url.Values{"job": {strconv.FormatInt(t.Job.ID, 10)}, "attempt": {strconv.Itoa(t.Job.Attempt)},
		"pid": {strconv.Itoa(h.pid)}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.cfg.sinkURL+"?"+q.Encode(), nil)
	if err != nil {
		return fmt.Errorf("sink: %w", err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("sink: %w", err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	switch res.StatusCode {
	case http.StatusOK:
		return nil
	case http.StatusConflict:
		h.logger.Warn("sink refused a late write", "job_id", t.Job.ID, "attempt", t.Job.Attempt)
		return errFenced
	}
	return fmt.Errorf("sink: status %d", res.StatusCode)
}
