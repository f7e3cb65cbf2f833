package httpapi_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/feed"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/pipeline"
	"github.com/docketq/docket/pipeline/extract/extracttest"
	"github.com/docketq/docket/queue"
)

// e2eWait bounds every wait of the end-to-end tests: the first PDF of a
// machine may compile the PDF engine (seconds, more under -race).
const e2eWait = time.Minute

// forEachE2E runs fn as a parallel subtest per store on an adminEnv whose
// GET /v1/events is the real feed. No worker runs until startPipeline.
func forEachE2E(t *testing.T, fn func(t *testing.T, e *adminEnv)) {
	t.Helper()
	for _, b := range httpapi.TestBackends {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := newAdminEnvStore(t, httpapi.OpenTestStore(t, b), func(c *httpapi.Config) {
				f := feed.New(feed.Config{Client: c.Queue, Queue: docket.DocumentQueue})
				sseGo(t, f.Run)
				c.Events = f
			})
			fn(t, e)
		})
	}
}

// startPipeline runs a real worker with the real document processor on the
// env's store, blobs and embedder until the test ends.
func (e *adminEnv) startPipeline() { e.startPipelineWith(pipeline.Config{}) }

// startPipelineWith is startPipeline with a processor made of cfg (its
// store, blobs and embedder the env's).
func (e *adminEnv) startPipelineWith(cfg pipeline.Config) {
	e.t.Helper()
	cfg.Store, cfg.Blobs, cfg.Embedder = e.driver, e.blobs, e.embedder
	proc, err := pipeline.NewProcessor(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	w, err := queue.NewWorker(e.queue, queue.WorkerConfig{
		Queues:        map[string]queue.QueueConfig{docket.DocumentQueue: {MaxWorkers: 2}},
		Handlers:      proc.Handlers(),
		PollInterval:  20 * time.Millisecond,
		ShutdownGrace: 10 * time.Millisecond,
		Maintenance:   queue.MaintenanceConfig{Disabled: true},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	sseGo(e.t, w.Run)
}

// upload posts data as the file of a new document with key and returns the
// 202's body.
func (e *adminEnv) upload(key, filename string, data []byte) (httpapi.DocumentView, httpapi.JobView) {
	e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", filename)
	if err != nil {
		e.t.Fatal(err)
	}
	_, _ = fw.Write(data)
	_ = mw.Close()
	req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, e.url+"/v1/documents", &buf)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+key)
	r := e.send(req)
	if r.status != http.StatusAccepted {
		e.t.Fatalf("upload %s: status %d: %s", filename, r.status, r.body)
	}
	var u struct {
		Document httpapi.DocumentView `json:"document"`
		Job      httpapi.JobView      `json:"job"`
	}
	r.decode(e.t, &u)
	return u.Document, u.Job
}

// get sends GET path with key, checks for 200 and decodes the body into v.
func (e *adminEnv) get(path, key string, v any) {
	e.t.Helper()
	r := e.do(http.MethodGet, path, key, nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("GET %s: status %d: %s", path, r.status, r.body)
	}
	r.decode(e.t, v)
}

// e2ePDF is a small two-page PDF with words to search for.
func e2ePDF() []byte {
	return extracttest.PDF{Title: "Harbour survey", Pages: []extracttest.PDFPage{
		{Text: extracttest.Lines(72, 720, 14, "The harbour survey counted seventeen lighthouses.", "Each lighthouse keeper filed a report.")},
		{Text: extracttest.Lines(72, 720, 14, "Storm damage to the northern pier was repaired in May.")},
	}}.Bytes()
}

// TestE2E_UploadProcessSearch: an upload waits, pending, in the snapshot of
// GET /v1/events; a real worker running the real pipeline then shows every
// stage live, percents rising within each stage's range, up to completed;
// the document has its fields and search finds it.
func TestE2E_UploadProcessSearch(t *testing.T) {
	t.Parallel()
	forEachE2E(t, func(t *testing.T, e *adminEnv) {
		ct := e.createTenant("acme", nil)
		doc, job := e.upload(ct.APIKey, "survey.pdf", e2ePDF())
		s := connectSSE(t, e.url, ct.APIKey, "")
		s.wait = e2eWait
		ev := s.until(ct.Tenant.ID, func(v httpapi.JobView) bool { return v.ID == job.ID })
		if v := ev.job; v.Status != "pending" || v.Stage != "queued" || v.QueuePosition == nil || *v.QueuePosition != 0 || v.DocumentID != doc.ID {
			t.Fatalf("snapshot %+v, want the pending job at position 0", v)
		}
		e.startPipeline()
		checkLiveStages(t, s, ct.Tenant.ID, job.ID)

		var got httpapi.JobView
		e.get("/v1/jobs/"+job.ID, ct.APIKey, &got)
		if got.Status != "completed" || got.ProgressPercent != 100 || got.Attempt != 1 || got.CompletedAt == nil {
			t.Errorf("job %+v", got)
		}
		var d httpapi.DocumentView
		e.get("/v1/documents/"+doc.ID, ct.APIKey, &d)
		if f := d.Fields; d.Status != "completed" || f == nil || f.Title != "Harbour survey" || f.PageCount != 2 ||
			f.ChunkCount < 1 || f.WordCount < 10 || f.EmbeddingModel != e.embedder.Model() {
			t.Errorf("document %+v, fields %+v", d, d.Fields)
		}
		var res struct {
			Results []struct {
				DocumentID string `json:"document_id"`
				Text       string `json:"text"`
			} `json:"results"`
		}
		e.get("/v1/search?q="+url.QueryEscape("lighthouse keeper report"), ct.APIKey, &res)
		if len(res.Results) == 0 || res.Results[0].DocumentID != doc.ID || !strings.Contains(res.Results[0].Text, "lighthouse") {
			t.Errorf("search results %+v", res.Results)
		}
	})
}

// checkLiveStages reads the stream until job id completes, checking it goes
// (after its start, still "queued") through every pipeline stage in order with percents never going back and
// each inside its stage's range.
func checkLiveStages(t *testing.T, s *sseStream, tenantID, id string) {
	t.Helper()
	var seen []string
	stage, percent := 0, 0
	for {
		v := s.until(tenantID, func(v httpapi.JobView) bool { return v.ID == id }).job
		if v.Status == "completed" {
			if v.ProgressPercent != 100 || v.Stage != "completed" {
				t.Errorf("completed at %s %d%%", v.Stage, v.ProgressPercent)
			}
			break
		}
		if v.Status != "processing" {
			t.Fatalf("job %s is %s (%v)", id, v.Status, v.ErrorMessage)
		}
		if v.Stage == "queued" && len(seen) == 0 && v.ProgressPercent == 0 {
			continue // claimed, before the first stage
		}
		i := slices.IndexFunc(pipeline.Stages, func(s pipeline.Stage) bool { return s.Name == v.Stage })
		switch {
		case i < 0:
			t.Fatalf("unknown stage %q", v.Stage)
		case i < stage || v.ProgressPercent < percent:
			t.Fatalf("progress went back: %s %d%% after %s %d%%", v.Stage, v.ProgressPercent, pipeline.Stages[stage].Name, percent)
		case v.ProgressPercent < pipeline.Stages[i].From || v.ProgressPercent > pipeline.Stages[i].To:
			t.Fatalf("%s at %d%%: outside %d-%d", v.Stage, v.ProgressPercent, pipeline.Stages[i].From, pipeline.Stages[i].To)
		}
		if len(seen) == 0 || seen[len(seen)-1] != v.Stage {
			seen = append(seen, v.Stage)
		}
		stage, percent = i, v.ProgressPercent
	}
	want := []string{"downloading", "parsing", "chunking", "embedding", "analyzing"}
	if !slices.Equal(seen, want) {
		t.Errorf("stages seen live %q, want %q", seen, want)
	}
}

// TestE2E_RetryFailed: a malformed PDF fails after one attempt with its
// reason; a retry makes a new job linked to the failed one, which stays as
// it was.
func TestE2E_RetryFailed(t *testing.T) {
	t.Parallel()
	forEachE2E(t, func(t *testing.T, e *adminEnv) {
		ct := e.createTenant("acme", nil)
		s := connectSSE(t, e.url, ct.APIKey, "")
		s.wait = e2eWait
		e.startPipeline()
		doc, job := e.upload(ct.APIKey, "broken.pdf", []byte("%PDF-1.7\n%%EOF\n"))
		failed := s.until(ct.Tenant.ID, func(v httpapi.JobView) bool {
			return v.ID == job.ID && v.Status != "pending" && v.Status != "processing"
		}).job
		if failed.Status != "failed" || failed.Attempt != 1 || failed.ErrorMessage == nil ||
			!strings.HasPrefix(*failed.ErrorMessage, "rejected_input: malformed: ") {
			t.Fatalf("job %+v (error %v), want failed after 1 attempt as malformed", failed, failed.ErrorMessage)
		}
		var d httpapi.DocumentView
		e.get("/v1/documents/"+doc.ID, ct.APIKey, &d)
		if d.Status != "failed" || d.JobID != job.ID {
			t.Errorf("document %+v", d)
		}

		r := e.do(http.MethodPost, "/v1/documents/"+doc.ID+"/retry", ct.APIKey, nil)
		if r.status != http.StatusAccepted {
			t.Fatalf("retry: status %d: %s", r.status, r.body)
		}
		var res struct {
			Job httpapi.JobView `json:"job"`
		}
		r.decode(t, &res)
		if res.Job.ID == job.ID || res.Job.RetryOf == nil || *res.Job.RetryOf != job.ID || res.Job.DocumentID != doc.ID {
			t.Errorf("retry job %+v", res.Job)
		}
		// The retry runs (and fails the same way); the original is kept.
		again := s.until(ct.Tenant.ID, func(v httpapi.JobView) bool { return v.ID == res.Job.ID && v.Status == "failed" }).job
		if again.Attempt != 1 {
			t.Errorf("retried job: %d attempts, want 1", again.Attempt)
		}
		var orig httpapi.JobView
		e.get("/v1/jobs/"+job.ID, ct.APIKey, &orig)
		if orig.Status != "failed" || orig.ErrorMessage == nil || *orig.ErrorMessage != *failed.ErrorMessage || orig.RetryOf != nil {
			t.Errorf("original job %+v", orig)
		}
		e.get("/v1/documents/"+doc.ID, ct.APIKey, &d)
		if d.JobID != res.Job.ID || d.Status != "failed" {
			t.Errorf("document after the retry %+v", d)
		}
	})
}
