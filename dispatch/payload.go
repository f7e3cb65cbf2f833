package dispatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/docketq/docket/queue"
)

// PayloadType is the type of the message sent for a job.
const PayloadType = "docket.job"

// Payload is the JSON body POSTed to an endpoint, in the Standard
// Webhooks shape (type, timestamp, data).
type Payload struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Data      Data      `json:"data"`
}

// Data is the job and how to report on it.
type Data struct {
	Job      JobInfo  `json:"job"`
	Callback Callback `json:"callback"`
}

// JobInfo is the job as an endpoint sees it.
type JobInfo struct {
	ID          string          `json:"id"`
	Kind        string          `json:"kind"`
	TenantID    string          `json:"tenant_id"`
	Queue       string          `json:"queue"`
	Attempt     int             `json:"attempt"`
	MaxAttempts int             `json:"max_attempts"`
	Args        json.RawMessage `json:"args"`
	CreatedAt   time.Time       `json:"created_at"`
}

// Callback says where an endpoint that answered 202 reports, and with
// which token (Authorization: Bearer <token>). The token is this
// attempt's lease: it stops working once the attempt ends.
type Callback struct {
	Token       string `json:"token"`
	ProgressURL string `json:"progress_url"`
	CompleteURL string `json:"complete_url"`
	FailURL     string `json:"fail_url"`
}

func (d *Dispatcher) payload(t *queue.Task) *Payload {
	j := t.Job
	args := j.Args
	if len(args) == 0 {
		args = json.RawMessage("null")
	}
	base := d.cfg.CallbackURL + "/v1/dispatch/jobs/" + strconv.FormatInt(j.ID, 10)
	return &Payload{
		Type: PayloadType, Timestamp: d.cfg.Now().UTC(),
		Data: Data{
			Job: JobInfo{
				ID: strconv.FormatInt(j.ID, 10), Kind: j.Kind, TenantID: j.TenantID, Queue: j.Queue,
				Attempt: j.Attempt, MaxAttempts: j.MaxAttempts, Args: args, CreatedAt: j.CreatedAt,
			},
			Callback: Callback{
				Token:       FormatToken(t.Lease()),
				ProgressURL: base + "/progress", CompleteURL: base + "/complete", FailURL: base + "/fail",
			},
		},
	}
}

// ErrToken is the error of a callback token that is not one.
var ErrToken = errors.New("dispatch: malformed lease token")

// FormatToken writes a lease as a callback token, "<attempt>.<token>";
// the job id is in the callback's path.
func FormatToken(l queue.Lease) string {
	return strconv.Itoa(l.Attempt) + "." + strconv.FormatInt(l.Token, 10)
}

// ParseToken reads a callback token of job id back into its lease.
func ParseToken(id int64, s string) (queue.Lease, error) {
	a, tok, ok := strings.Cut(s, ".")
	attempt, err1 := strconv.Atoi(a)
	token, err2 := strconv.ParseInt(tok, 10, 64)
	if !ok || err1 != nil || err2 != nil || attempt < 1 || token == 0 {
		return queue.Lease{}, fmt.Errorf("%w", ErrToken)
	}
	return queue.Lease{JobID: id, Attempt: attempt, Token: token}, nil
}

// Queue is the queue dispatched jobs are enqueued in and worked from.
const Queue = "dispatch"
