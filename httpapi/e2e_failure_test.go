package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/feed"
	"github.com/docketq/docket/httpapi"
)

// quotaEmbedder refuses every call as a service whose quota is used up: a
// permanent failure of the embedding stage, which a retry can get past
// once the quota is back.
type quotaEmbedder struct{ embedding.Embedder }

func (quotaEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, fmt.Errorf("%w: monthly quota used up", embedding.ErrQuotaExceeded)
}

// TestE2E_FailureStageAndRetryable: a failed job names the stage it failed
// in (failed_stage) and says whether a retry could end otherwise
// (retryable, on the job and its document): a malformed PDF fails in
// parsing and is not retryable; a refused embedding fails in embedding and
// is; a cancelled document is; a waiting one has neither. A finished
// job's final attempt ran from started_at to completed_at.
func TestE2E_FailureStageAndRetryable(t *testing.T) {
	t.Parallel()
	for _, b := range httpapi.TestBackends {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := newAdminEnvStore(t, httpapi.OpenTestStore(t, b), func(c *httpapi.Config) {
				f := feed.New(feed.Config{Client: c.Queue, Queue: docket.DocumentQueue})
				sseGo(t, f.Run)
				c.Events = f
				c.Embedder = quotaEmbedder{c.Embedder}
			})
			ct := e.createTenant("acme", nil)
			s := connectSSE(t, e.url, ct.APIKey, "")
			s.wait = e2eWait

			waiting, waitingJob := e.upload(ct.APIKey, "waiting.txt", []byte("A note to cancel before it runs.\n"))
			var j httpapi.JobView
			e.get("/v1/jobs/"+waitingJob.ID, ct.APIKey, &j)
			if j.Status != "pending" || j.FailedStage != nil || j.Retryable {
				t.Errorf("waiting job %s: failed_stage %v, retryable %v; want neither", j.Status, j.FailedStage, j.Retryable)
			}
			if r := e.do(http.MethodPost, "/v1/jobs/"+waitingJob.ID+"/cancel", ct.APIKey, nil); r.status != http.StatusOK {
				t.Fatalf("cancel: %d %s", r.status, r.body)
			}
			checkFailure(t, e, ct.APIKey, waiting.ID, waitingJob.ID, "cancelled", "", true)

			broken, brokenJob := e.upload(ct.APIKey, "broken.pdf", []byte("%PDF-1.7\n%%EOF\n"))
			refused, refusedJob := e.upload(ct.APIKey, "refused.txt", []byte("Every lighthouse keeper filed a report.\n"))
			e.startPipeline()
			ended := map[string]bool{}
			s.until(ct.Tenant.ID, func(v httpapi.JobView) bool {
				if v.Status == "failed" {
					ended[v.ID] = true
				}
				return ended[brokenJob.ID] && ended[refusedJob.ID]
			})
			checkFailure(t, e, ct.APIKey, broken.ID, brokenJob.ID, "failed", "parsing", false)
			checkFailure(t, e, ct.APIKey, refused.ID, refusedJob.ID, "failed", "embedding", true)
		})
	}
}

// checkFailure checks that job jobID of document docID ended with status,
// failed in stage (none when empty), with retryable on both, and that its
// final attempt's start and end are there and in order.
func checkFailure(t *testing.T, e *adminEnv, key, docID, jobID, status, stage string, retryable bool) {
	t.Helper()
	var j httpapi.JobView
	e.get("/v1/jobs/"+jobID, key, &j)
	var d httpapi.DocumentView
	e.get("/v1/documents/"+docID, key, &d)
	got := ""
	if j.FailedStage != nil {
		got = *j.FailedStage
	}
	if j.Status != status || got != stage || j.Retryable != retryable || d.Retryable != retryable {
		t.Errorf("job %s: %s in stage %q, retryable %v (document's %v); want %s in %q, retryable %v (error %v)",
			jobID, j.Status, got, j.Retryable, d.Retryable, status, stage, retryable, j.ErrorMessage)
	}
	if stage == "" {
		return
	}
	if j.StartedAt == nil || j.CompletedAt == nil || j.CompletedAt.Before(*j.StartedAt) || j.StartedAt.Before(j.CreatedAt) {
		t.Errorf("job %s: created %v, started %v, completed %v: want the final attempt's start and end in order",
			jobID, j.CreatedAt, j.StartedAt, j.CompletedAt)
	}
}
