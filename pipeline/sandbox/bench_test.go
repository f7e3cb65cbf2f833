package sandbox

import (
	"bytes"
	"context"
	"testing"

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

// BenchmarkProcessPDF extracts and analyses a generated 10-page PDF, one
// document at a time, in this process and in a sandbox child: pages/s of
// each, and so what the child process costs a document.
func BenchmarkProcessPDF(b *testing.B) {
	pdf := xt.ProsePDF(10).Bytes()
	engine, err := extract.NewPDFEngine(extract.PDFConfig{Instances: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = engine.Close() })
	pool, err := NewPool(Config{Procs: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = pool.Close() })
	run := map[string]func() (*Result, error){
		"inprocess": func() (*Result, error) {
			return InProcess(context.Background(), extract.TypePDF, bytes.NewReader(pdf), int64(len(pdf)), extract.Options{PDF: engine})
		},
		"sandbox": func() (*Result, error) {
			return pool.Process(context.Background(), extract.TypePDF, bytes.NewReader(pdf), int64(len(pdf)), extract.Options{})
		},
	}
	for _, name := range []string{"inprocess", "sandbox"} {
		b.Run(name, func(b *testing.B) {
			if _, err := run[name](); err != nil { // warm: the engine, the child
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := run[name](); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(10*b.N)/b.Elapsed().Seconds(), "pages/s")
		})
	}
}
