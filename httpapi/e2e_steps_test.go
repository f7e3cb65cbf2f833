package httpapi_test

import (
	"fmt"
	"testing"

	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/pipeline"
	"github.com/docketq/docket/pipeline/extract/extracttest"
)

// TestE2E_PDFSteps: a PDF of more pages than RangePages is processed as a
// step per range of pages; GET /v1/jobs/{id} shows them, each with its
// pages, status and progress, and the document has every page's fields.
func TestE2E_PDFSteps(t *testing.T) {
	t.Parallel()
	forEachE2E(t, func(t *testing.T, e *adminEnv) {
		ct := e.createTenant("acme", nil)
		s := connectSSE(t, e.url, ct.APIKey, "")
		s.wait = e2eWait
		e.startPipelineWith(pipeline.Config{RangePages: 2})
		doc, job := e.upload(ct.APIKey, "prose.pdf", extracttest.ProsePDF(5).Bytes())
		done := s.until(ct.Tenant.ID, func(v httpapi.JobView) bool {
			return v.ID == job.ID && v.Status != "pending" && v.Status != "processing"
		}).job
		if done.Status != "completed" {
			t.Fatalf("job %+v (error %v)", done, done.ErrorMessage)
		}
		var got httpapi.JobView
		e.get("/v1/jobs/"+job.ID, ct.APIKey, &got)
		if len(got.Steps) != 3 || got.ProgressPercent != 100 {
			t.Fatalf("job %+v with steps %+v, want 3", got, got.Steps)
		}
		for i, st := range got.Steps {
			first, last := 2*i+1, min(2*i+2, 5)
			if st.Name != fmt.Sprintf("pages-%04d-%04d", first, last) || st.FirstPage != first || st.LastPage != last ||
				st.Status != "completed" || st.ProgressPercent != 100 || st.Kind != pipeline.RangeKind || st.ErrorMessage != nil {
				t.Errorf("step %d: %+v", i, st)
			}
			var sj httpapi.JobView
			e.get("/v1/jobs/"+st.JobID, ct.APIKey, &sj)
			if sj.DocumentID != doc.ID || sj.Status != "completed" || len(sj.Steps) != 0 {
				t.Errorf("step %d's job %+v", i, sj)
			}
		}
		var d httpapi.DocumentView
		e.get("/v1/documents/"+doc.ID, ct.APIKey, &d)
		if f := d.Fields; d.Status != "completed" || f == nil || f.PageCount != 5 || f.ChunkCount < 5 {
			t.Errorf("document %+v, fields %+v", d, d.Fields)
		}
	})
}
