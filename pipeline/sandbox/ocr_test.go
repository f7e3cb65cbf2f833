package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

// TestProcess_OCR: the OCR settings reach the child, which runs tesseract (here a script
// standing in for it) on the pages without text, and relays each page's progress.
func TestProcess_OCR(t *testing.T) {
	t.Parallel()
	tess := filepath.Join(t.TempDir(), "tesseract")
	if err := os.WriteFile(tess, []byte("#!/bin/sh\n/bin/cat >/dev/null\necho \"read with $*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := newPool(t, Config{Procs: 1})
	var mu sync.Mutex
	var progress []int
	opts := extract.Options{
		OCR: &extract.OCRConfig{Command: tess, DPI: 100, Languages: "deu"},
		Progress: func(done, _ int) {
			mu.Lock()
			progress = append(progress, done)
			mu.Unlock()
		},
	}
	pdf := xt.MixedPDF().Bytes()
	res, err := p.Process(t.Context(), extract.TypePDF, bytes.NewReader(pdf), int64(len(pdf)), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Doc.Pages[1].Text, "read with - - --dpi 100 -l deu"; got != want {
		t.Errorf("page 2 = %q, want %q", got, want)
	}
	if want := []string{"text of 1 of 3 pages read by OCR (deu)"}; !slices.Equal(res.Doc.Warnings, want) {
		t.Errorf("warnings = %q, want %q", res.Doc.Warnings, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(progress, []int{1, 2, 3}) {
		t.Errorf("progress = %v, want [1 2 3]", progress)
	}
}
