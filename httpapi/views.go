package httpapi

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

// JobView is a job as the API shows it (GET /v1/jobs/{id}, and the
// job of an upload's answer).
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
	StartedAt       *time.Time `json:"started_at"`
	CompletedAt     *time.Time `json:"completed_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
	// Result is what a completed job's handler returned (a dispatched
	// job's endpoint); null when none.
	Result json.RawMessage `json:"result"`
	// PartialResult is what the job's handler has found so far
	// (queue.Job.PartialResult; a document's early results, pipeline.Early),
	// kept once the job ends; null when none.
	PartialResult json.RawMessage `json:"partial_result"`
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
	return v
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
	Error       *string        `json:"error"` // why it failed; null unless failed
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
		Size: d.Size, SHA256: d.SHA256, Status: string(d.Status), Error: failure, JobID: strconv.FormatInt(d.JobID, 10),
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
