package extract_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

// A long PDF /Title, once let through the title check (MaxPDFTitleStringBytes), costs the Go
// heap only the prefix that is kept: the engine hands it over
// in its own memory, and only MaxTitleBytes' worth is decoded. Measured against the same file
// with the string under /Subject, which nothing reads. Not parallel: it counts the process's
// allocations.
func TestExtract_PDFTitleReadAsPrefix(t *testing.T) {
	const n = 4 << 20 // over MaxPDFTitleStringBytes: the check is lifted to read it
	defer extract.SetTitleCheck(extract.MaxPDFStringBytes)()
	allocated := func(data []byte) (uint64, *extract.Document) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		doc, err := extractBytes(t, extract.TypePDF, data, extract.Options{})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		return after.TotalAlloc - before.TotalAlloc, doc
	}
	allocated(xt.LongInfoPDF("Subject", n)) // warm: instances, pools
	base, _ := allocated(xt.LongInfoPDF("Subject", n))
	title, doc := allocated(xt.LongTitlePDF(n))
	if doc.Title != strings.Repeat("T", extract.MaxTitleBytes) {
		t.Errorf("title %q…", doc.Title[:min(len(doc.Title), 20)])
	}
	t.Logf("allocated %d KiB with a %d MiB title, %d KiB without", title>>10, n>>20, base>>10)
	if title > base+n/4 {
		t.Errorf("a %d MiB title cost the Go heap %d KiB more than none (want under %d KiB)", n>>20, (title-base)>>10, n/4>>10)
	}
}
