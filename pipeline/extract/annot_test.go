package extract_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docketq/docket/pipeline/extract"
)

// Text drawn by annotations (a FreeText comment, shapes with text) is part of the text layer:
// these two files of pdfcpu's test data have no text in their page content streams, only in
// annotation appearances, and must not be taken for scanned pages that need OCR.
func TestExtract_PDFAnnotationText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want []string
	}{
		{"testWithText.pdf", []string{"This is some very important text!"}},
		{"annotTest.pdf", []string{"gopher", "Text", "sdfsdf"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join("testdata", "pdfcpu", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := extractBytes(t, extract.TypePDF, data, extract.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if slices.ContainsFunc(doc.Warnings, func(w string) bool { return strings.Contains(w, extract.WarnNoTextLayer) }) {
				t.Errorf("warnings %q", doc.Warnings)
			}
			text := doc.Pages[0].Text
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("page 1 lacks %q: %q", w, text)
				}
			}
		})
	}
}
