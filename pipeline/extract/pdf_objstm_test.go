package extract_test

import (
	"strings"
	"testing"

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

// Titles in object streams are read exactly as in plain objects (PDFium decodes them), cut to
// MaxTitleBytes, and the rest of the document is parsed. Titles of tens of MB or more are the
// bomb table's (extracttest.PDFCases).
func TestExtract_ObjStmTitle(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("T", extract.MaxTitleBytes)
	tests := []struct {
		name, title string
		pdf         xt.ObjStmPDF
	}{
		{"literal with escapes", "Hello (world) café\nnext", xt.ObjStmPDF{Info: `<< /Title (Hello \(world\) caf\351\nnext) >>`}},
		{"UTF-16BE hex with a BOM", "Hi ✓", xt.ObjStmPDF{Info: "<< /Title <FEFF00480069 0020 2713> >>"}},
		{"reference", "Referenced", xt.ObjStmPDF{Info: "<< /Title 8 0 R >>", Extra: []string{"(Referenced)"}}},
		{"64 KiB", long, xt.ObjStmPDF{Info: "<< /Title (%FILL%) >>", Fill: 64<<10 - 2}},
		{"1 MiB", long, xt.ObjStmPDF{Info: "<< /Title (%FILL%) >>", Fill: 1 << 20}},
		{"truncated", "", xt.ObjStmPDF{Info: "<< /Title (%FILL%) >>", Fill: 30 << 20, Cut: 12}},
		{"offsets inside tokens", "", xt.ObjStmPDF{Info: "<< /Title (t) >>", Shift: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc, err := extractBytes(t, extract.TypePDF, tt.pdf.Bytes(), extract.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tt.pdf.Fill == 0 && len(tt.pdf.Extra) == 0 && tt.pdf.Shift == 0 && tt.pdf.Cut == 0 { // the same dictionary as a plain object
				plain, err := extractBytes(t, extract.TypePDF, xt.PlainInfoPDF(tt.pdf.Info), extract.Options{})
				if err != nil || plain.Title != doc.Title {
					t.Errorf("title %q in an object stream, %q (%v) in a plain object", doc.Title, plain.Title, err)
				}
			}
			if doc.Title != tt.title {
				t.Errorf("title %q (%d bytes), want %q", doc.Title[:min(len(doc.Title), 40)], len(doc.Title), tt.title[:min(len(tt.title), 40)])
			}
			if len(doc.Warnings) != 0 {
				t.Errorf("warnings %q", doc.Warnings)
			}
			if len(doc.Pages) != 1 || doc.Pages[0].Text != "Object streams" {
				t.Errorf("pages %+v", doc.Pages)
			}
		})
	}
}
