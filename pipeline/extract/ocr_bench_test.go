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
// of its tesseract children, so it stays the rate of a core on a loaded machine too.
func BenchmarkOCR(b *testing.B) {
	ocr := tesseract(b)
	scan := scanned(b, xt.LetterPDF().Bytes(), 300)
	cpu0 := cpuTime(b)
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
	b.ReportMetric(pages/b.Elapsed().Seconds(), "pages/s")
	b.ReportMetric(pages/(cpuTime(b)-cpu0).Seconds(), "pages/cpu-s")
}

// cpuTime returns the CPU time of this process and of the children it has waited for.
func cpuTime(b *testing.B) time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			b.Fatal(err)
		}
		total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return total
}
