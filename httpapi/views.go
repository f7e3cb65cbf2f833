package httpapi

import (
	"cmp"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

// JobView is a job as the API shows it.
type JobView struct {
	ID              string     `json:"id"`
	DocumentID      string     `json:"document_id"`
	TenantID        string     `json:"tenant_id"`
	Kind            string     `json:"kind"`
	Status          string     `json:"status"`
	Stage           string     `json:"stage"`
	ProgressPercent int        `json:"progress_percent"`
	ProgressMessage string     `json:"progress_message,omitempty"`
	QueuePosition   *int       `json:"queue_position"`
	Paused          bool       `json:"paused"` // waits on a paused queue or tenant (GET /v1/jobs)
	Attempt         int        `json:"attempt"`
	MaxAttempts     int        `json:"max_attempts"`
	ErrorMessage    *string    `json:"error_message"`
	RetryOf         *string    `json:"retry_of"`
	CreatedAt       time.Time  `json:"created_at"`
	StartedAt       *time.Time `json:"started_at"` // start of the current or last attempt
	CompletedAt     *time.Time `json:"completed_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
	// Result is what a completed job's handler returned (a dispatched
	// job's endpoint); null when none.
	Result json.RawMessage `json:"result"`
	// PartialResult is what the job's handler has found so far
	// (queue.Job.PartialResult; a document's early results, pipeline.Early),
	// kept once the job ends; null when none.
	PartialResult json.RawMessage `json:"partial_result"`
	// FailedStage is the stage the failed job's last attempt was in when
	// it failed ("queued" when it failed before entering one); null unless
	// the job failed.
	FailedStage *string `json:"failed_stage"`
	// Retryable reports whether a retry of the job's document could end
	// otherwise: the job failed or was cancelled, and not because of its
	// input (see retryable).
	Retryable bool `json:"retryable"`
	// Steps are the jobs a workflow job started (a long PDF's page
	// ranges), in order; only GET /v1/jobs/{id} shows them, and only for
	// a job that has any.
	Steps []StepView `json:"steps,omitempty"`
}

// NewJobView renders a job as the API shows it, without its queue
// position (for the CLI).
func NewJobView(j *queue.Job) JobView { return jobView(j, -1) }

// jobView renders j; position is the number of jobs ahead of a pending job
// (ignored, shown as null, for any other state or when negative).
func jobView(j *queue.Job, position int) JobView {
	v := JobView{
		ID:              strconv.FormatInt(j.ID, 10),
		DocumentID:      docket.DocumentIDOf(j),
		TenantID:        j.TenantID,
		Kind:            j.Kind,
		Status:          string(docket.StatusOf(j.State)),
		Stage:           stageOf(j),
		ProgressPercent: j.Progress,
		ProgressMessage: j.ProgressMessage,
		Attempt:         j.Attempt,
		MaxAttempts:     j.MaxAttempts,
		CreatedAt:       j.CreatedAt,
		StartedAt:       timePtr(j.StartedAt),
		CompletedAt:     timePtr(j.CompletedAt),
		UpdatedAt:       j.UpdatedAt,
		PartialResult:   j.PartialResult,
	}
	if (j.State == queue.StatePending || j.State == queue.StateScheduled) && position >= 0 {
		v.QueuePosition = &position
	}
	if j.ErrorMessage != "" && j.State != queue.StateRunning && j.State != queue.StateCompleted {
		// A job running again keeps its last attempt's message in the
		// store; it is not this attempt's error.
		v.ErrorMessage = &j.ErrorMessage
	}
	if j.RetryOf != 0 {
		s := strconv.FormatInt(j.RetryOf, 10)
		v.RetryOf = &s
	}
	if j.State == queue.StateCompleted {
		v.ProgressPercent, v.Result = 100, j.Result
	}
	if j.State == queue.StateFailed {
		stage := cmp.Or(j.Stage, "queued")
		v.FailedStage = &stage
	}
	v.Retryable = retryable(docket.StatusOf(j.State), j.ErrorMessage)
	return v
}

// rejectedInput starts the error message of a document job failed for its
// input (pipeline.ReasonRejectedInput and its separator): "rejected_input:
// encrypted: ...".
const rejectedInput = "rejected_input: "

// retryable reports whether running a document again (POST
// /v1/documents/{id}/retry) could end otherwise than its job with status
// and error message did: a cancelled job could, and so could a failed one,
// unless its input was rejected (malformed, encrypted, too large, of an
// unsupported type, too slow to read): the same bytes fail the same way.
func retryable(status docket.DocumentStatus, errorMessage string) bool {
	switch status {
	case docket.StatusCancelled:
		return true
	case docket.StatusFailed:
		return !strings.HasPrefix(errorMessage, rejectedInput)
	}
	return false
}

// stageOf names the stage the API shows: "queued" before the first start,
// "completed" and "failed" at the end, else the stage the handler reported.
func stageOf(j *queue.Job) string {
	switch j.State {
	case queue.StateCompleted:
		return "completed"
	case queue.StateFailed:
		return "failed"
	case queue.StatePending, queue.StateScheduled:
		return "queued"
	}
	if j.Stage == "" {
		return "queued"
	}
	return j.Stage
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// DocumentView is a document as the API shows it.
type DocumentView struct {
	ID          string         `json:"id"`
	TenantID    string         `json:"tenant_id"`
	Filename    string         `json:"filename"`
	ContentType string         `json:"content_type"`
	Size        int64          `json:"size"`
	SHA256      string         `json:"sha256"`
	Status      string         `json:"status"`
	Error       *string        `json:"error"`     // why it failed; null unless failed
	Retryable   bool           `json:"retryable"` // a retry could end otherwise (see retryable)
	JobID       string         `json:"job_id"`
	Fields      *docket.Fields `json:"fields"`
	Warnings    []string       `json:"warnings"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
}

func documentView(d *docket.Document) DocumentView {
	w := d.Warnings
	if w == nil {
		w = []string{}
	}
	var failure *string
	if d.Status == docket.StatusFailed && d.Error != "" {
		failure = &d.Error
	}
	return DocumentView{
		ID: d.ID, TenantID: d.TenantID, Filename: d.Filename, ContentType: d.ContentType,
		Size: d.Size, SHA256: d.SHA256, Status: string(d.Status), Error: failure, Retryable: retryable(d.Status, d.Error),
		JobID:  strconv.FormatInt(d.JobID, 10),
		Fields: d.Fields, Warnings: w, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
	}
}

// parseJobID parses a job id from a path; a malformed id is not found.
func parseJobID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, docket.ErrNotFound
	}
	return id, nil
}
