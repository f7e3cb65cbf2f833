package extract_test

import (
	"testing"

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

// BenchmarkExtractPDF parses a generated 10-page PDF (about 32 lines of text per page) on one
// goroutine, so pages/s is the rate of one core; a fresh PDFium instance per document is
// included, as in production.
func BenchmarkExtractPDF(b *testing.B) {
	data := xt.ProsePDF(10).Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := extractBytes(b, extract.TypePDF, data, extract.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(10*b.N)/b.Elapsed().Seconds(), "pages/s")
}

// BenchmarkExtractPDF_Parallel runs the same parse on every P (the shared engine has two
// instances): pages/s here is the whole machine's.
func BenchmarkExtractPDF_Parallel(b *testing.B) {
	data := xt.ProsePDF(10).Bytes()
	b.SetBytes(int64(len(data)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := extractBytes(b, extract.TypePDF, data, extract.Options{}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(10*b.N)/b.Elapsed().Seconds(), "pages/s")
}

// BenchmarkExtractDOCX parses a generated 10-page DOCX.
func BenchmarkExtractDOCX(b *testing.B) {
	var body string
	for p := range 10 {
		body += xt.Heading("Heading1", "Section")
		for range 8 {
			body += xt.Para("The quick brown fox jumps over the lazy dog, again and again, page ", string(rune('0'+p)))
		}
		body += xt.PageBreak()
	}
	data := xt.DOCX{Body: body}.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := extractBytes(b, extract.TypeDOCX, data, extract.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(10*b.N)/b.Elapsed().Seconds(), "pages/s")
}

func BenchmarkSniffBytes(b *testing.B) {
	head := xt.ProsePDF(1).Bytes()[:512]
	html := []byte("<!DOCTYPE html><html><head><title>x</title></head><body>text</body></html>")
	b.ReportAllocs()
	for b.Loop() {
		_, _ = extract.SniffBytes(head)
		_, _ = extract.SniffBytes(html)
	}
}

func BenchmarkNormalize(b *testing.B) {
	doc, err := extractBytes(b, extract.TypePDF, xt.ProsePDF(10).Bytes(), extract.Options{})
	if err != nil {
		b.Fatal(err)
	}
	text := doc.Text()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		_ = extract.Normalize(text)
	}
}

// BenchmarkExtractPDF_Reuse is BenchmarkExtractPDF on an engine that keeps instances between
// documents (PDFConfig.ReuseInstances): the difference is the cost of a fresh instance.
func BenchmarkExtractPDF_Reuse(b *testing.B) {
	e, err := extract.NewPDFEngine(extract.PDFConfig{Instances: 1, ReuseInstances: true})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	data := xt.ProsePDF(10).Bytes()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := extractBytes(b, extract.TypePDF, data, extract.Options{PDF: e}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(10*b.N)/b.Elapsed().Seconds(), "pages/s")
}
