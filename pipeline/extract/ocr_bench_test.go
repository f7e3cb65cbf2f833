package extract_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

// BenchmarkOCR reads a scanned two-page letter (300 dpi) through Extract: each page rendered
// by PDFium and read by a tesseract process of one thread, one page after the other. pages/s
// is the wall-clock rate of that one core; pages/cpu-s counts the CPU time of this process and
// of its tesseract children, so it stays the rate of a core on a loaded machine too; of that,
// docket-cpu-ms/page is this process's (PDFium's instance, its rendering, the image's way to
// tesseract) and tesseract-cpu-ms/page the children's.
func BenchmarkOCR(b *testing.B) {
	ocr := tesseract(b)
	scan := scanned(b, xt.LetterPDF().Bytes(), 300)
	self0, children0 := cpuTime(b, syscall.RUSAGE_SELF), cpuTime(b, syscall.RUSAGE_CHILDREN)
	for b.Loop() {
		doc, err := extractBytes(b, extract.TypePDF, scan, extract.Options{OCR: ocr})
		if err != nil {
			b.Fatal(err)
		}
		if doc.Text() == "" {
			b.Fatal("no text read")
		}
	}
	pages := float64(2 * b.N)
	self := cpuTime(b, syscall.RUSAGE_SELF) - self0
	children := cpuTime(b, syscall.RUSAGE_CHILDREN) - children0
	b.ReportMetric(pages/b.Elapsed().Seconds(), "pages/s")
	b.ReportMetric(pages/(self+children).Seconds(), "pages/cpu-s")
	b.ReportMetric(float64(self.Milliseconds())/pages, "docket-cpu-ms/page")
	b.ReportMetric(float64(children.Milliseconds())/pages, "tesseract-cpu-ms/page")
}

// cpuTime returns the CPU time (user and system) of this process (RUSAGE_SELF) or of the
// children it has waited for (RUSAGE_CHILDREN).
func cpuTime(b *testing.B, who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRenderScan renders the pages of a scanned two-page letter (300 dpi) at 300 dpi, as
// OCR does, on one instance: docket-cpu-ms/page of BenchmarkOCR less the instance's start.
func BenchmarkRenderScan(b *testing.B) {
	scan := scanned(b, xt.LetterPDF().Bytes(), 300)
	cpu0 := cpuTime(b, syscall.RUSAGE_SELF)
	for b.Loop() {
		if _, err := extract.RenderGray(engine, scan, 300); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime(b, syscall.RUSAGE_SELF)-cpu0).Milliseconds())/float64(2*b.N), "cpu-ms/page")
}
