package dispatch

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
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

func (d *Dispatcher) payload(t *queue.Task) (*Payload, error) {
	j := t.Job
	token, err := d.Token(j.Kind, t.Lease())
	if err != nil {
		return nil, err
	}
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
				Token:       token,
				ProgressURL: base + "/progress", CompleteURL: base + "/complete", FailURL: base + "/fail",
			},
		},
	}, nil
}

// ErrToken is the error of a callback token that Docket did not issue
// for this job: malformed, or its MAC does not verify.
var ErrToken = errors.New("dispatch: invalid lease token")

// Token returns the callback token of a lease of a job of kind:
// "<attempt>.<lease token>.<mac>", the MAC an HMAC-SHA256 under the
// kind's first secret over the job id, attempt and lease token. Only a
// holder of the secret can make one, whatever the store's lease tokens
// look like; the store still decides whether the lease is held.
func (d *Dispatcher) Token(kind string, l queue.Lease) (string, error) {
	ep, ok := d.eps[kind]
	if !ok {
		return "", fmt.Errorf("%w: kind %q is not dispatched", ErrToken, kind)
	}
	return strconv.Itoa(l.Attempt) + "." + strconv.FormatInt(l.Token, 10) + "." + tokenMAC(ep.keys[0], l), nil
}

// CheckToken reads the callback token of job id, of kind, back into its
// lease. It returns ErrToken unless the MAC verifies under one of the
// kind's secrets (any of them, so tokens survive a rotation).
func (d *Dispatcher) CheckToken(kind string, id int64, s string) (queue.Lease, error) {
	ep, ok := d.eps[kind]
	if !ok {
		return queue.Lease{}, ErrToken
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return queue.Lease{}, ErrToken
	}
	attempt, err1 := strconv.Atoi(parts[0])
	token, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil || attempt < 1 || token == 0 {
		return queue.Lease{}, ErrToken
	}
	l := queue.Lease{JobID: id, Attempt: attempt, Token: token}
	for _, k := range ep.keys {
		if hmac.Equal([]byte(tokenMAC(k, l)), []byte(parts[2])) {
			return l, nil
		}
	}
	return queue.Lease{}, ErrToken
}

// tokenMAC is the MAC of a callback token. Its input starts with
// "docket-callback.", which no webhook-id ("job_...") does, so a token
// is never a request signature nor the reverse.
func tokenMAC(key []byte, l queue.Lease) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "docket-callback.%d.%d.%d", l.JobID, l.Attempt, l.Token)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Queue is the queue dispatched jobs are enqueued in and worked from.
const Queue = "dispatch"
