package pipeline_test

import (
	"testing"
	"time"

	"github.com/docketq/docket/pipeline"
	"github.com/docketq/docket/pipeline/extract"
	"github.com/docketq/docket/pipeline/extract/extracttest"
	"github.com/docketq/docket/pipeline/sandbox"
	"github.com/docketq/docket/queue"
)

// BenchmarkProcess10PagePDF measures documents per minute end to end: the
// upload's blob write and transaction, then a worker (2 slots) running the
// Processor, configured as the service's (RangePages), on a generated
// 10-page PDF through to the committed result, parsed in process and in
// the sandbox's child processes (two, one per slot).
func BenchmarkProcess10PagePDF(b *testing.B) {
	cfg := pipeline.Config{RangePages: pipeline.DefaultRangePages}
	for _, backend := range backends {
		b.Run(backend, func(b *testing.B) { benchmarkProcess(b, backend, cfg) })
		b.Run(backend+"/sandbox", func(b *testing.B) {
			cfg := cfg
			cfg.Sandbox = newSandbox(b, sandbox.Config{Procs: 2})
			benchmarkProcess(b, backend, cfg)
		})
	}
}

func benchmarkProcess(b *testing.B, backend string, cfg pipeline.Config) {
	e := setup(b, backend, cfg)
	pdf := extracttest.ProsePDF(10).Bytes()
	if _, id := e.upload(tenantA, extract.TypePDF, pdf); e.wait(id).State != queue.StateCompleted {
		b.Fatal("warm-up document failed") // compiles or loads PDFium first
	}
	b.ResetTimer()
	start := time.Now()
	ids := make([]int64, b.N)
	for i := range ids {
		_, ids[i] = e.upload(tenantA, extract.TypePDF, pdf)
	}
	for _, id := range ids {
		if job := e.wait(id); job.State != queue.StateCompleted {
			b.Fatalf("job %d %s: %s", id, job.State, job.ErrorMessage)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Minutes(), "docs/min")
}
