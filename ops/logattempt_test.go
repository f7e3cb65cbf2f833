package ops_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/docketq/docket/ops"
	"github.com/docketq/docket/queue"
)

// TestLogAttempts: one JSON line per ended attempt, with the job's fields,
// and the next hook still called.
func TestLogAttempts(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(lockedWriter{&mu, &buf}, nil))
	var called int
	h := ops.LogAttempts(logger, queue.Hooks{Finished: func(*queue.Job, queue.Outcome, error) { called++ }})
	job := &queue.Job{ID: 7, Queue: "q", Kind: "k", TenantID: "acme", Attempt: 2}
	h.Finished(job, queue.OutcomeCompleted, nil)
	h.Finished(job, queue.OutcomeFailed, errors.New("unreadable"))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || called != 2 {
		t.Fatalf("%d lines, next called %d times; want 2 and 2:\n%s", len(lines), called, buf.String())
	}
	var rec struct {
		Level, Msg, Queue, Kind, Outcome, Error string
		JobID                                   int64  `json:"job_id"`
		TenantID                                string `json:"tenant_id"`
		Attempt                                 int
	}
	if err := json.Unmarshal([]byte(lines[1]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Level != "WARN" || rec.Msg != "attempt ended" || rec.JobID != 7 || rec.Queue != "q" || rec.Kind != "k" ||
		rec.TenantID != "acme" || rec.Attempt != 2 || rec.Outcome != "failed" || rec.Error != "unreadable" {
		t.Errorf("log line %s, decoded %+v", lines[1], rec)
	}
}

type lockedWriter struct {
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}
