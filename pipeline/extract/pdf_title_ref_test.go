package extract_test

import (
	"strings"
	"testing"

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

// Whatever a /Title refers to — a string, a stream (which PDFium reads as its decoded data), a
// reference on to one, a number — the title is what PDFium hands over, cut to MaxTitleBytes,
// and the pages are parsed as usual. What a huge one costs is bounded by the engine's memory
// cap in process and by the sandbox's limits there (the bomb table's "title" rows).
func TestExtract_TitleRef(t *testing.T) {
	t.Parallel()
	const n = 64 << 10
	long := strings.Repeat("T", extract.MaxTitleBytes)
	tests := []struct {
		name, title, page string
		pdf               []byte
	}{
		{"a stream", long, "A title stream", xt.StreamTitlePDF(n, false)},
		{"a reference to a stream", "", "A title stream", xt.StreamTitlePDF(n, true)},
		{"a stream, from an object stream", long, "Object streams", xt.ObjStmPDF{Info: "<< /Title 8 0 R >>", Stream: n}.Bytes()},
		{"a reference to a stream, in an object stream", "", "Object streams",
			xt.ObjStmPDF{Info: "<< /Title 8 0 R >>", Extra: []string{"9 0 R"}, Stream: n}.Bytes()},
		{"a string in an object stream", "Referenced", "Object streams",
			xt.ObjStmPDF{Info: "<< /Title 8 0 R >>", Extra: []string{"(Referenced)"}}.Bytes()},
		{"a string", "Plain", "A title stream", xt.TitleRefPDF("(Plain)")},
		{"a string after a comment", "Plain", "A title stream", xt.TitleRefPDF("% a comment\n(Plain)")},
		{"a number", "", "A title stream", xt.TitleRefPDF("42")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc, err := extractBytes(t, extract.TypePDF, tt.pdf, extract.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if doc.Title != tt.title {
				t.Errorf("title %q (%d bytes), want %q", doc.Title[:min(len(doc.Title), 40)], len(doc.Title), tt.title[:min(len(tt.title), 40)])
			}
			if len(doc.Warnings) != 0 {
				t.Errorf("warnings %q", doc.Warnings)
			}
			if len(doc.Pages) != 1 || doc.Pages[0].Text != tt.page {
				t.Errorf("pages %+v", doc.Pages)
			}
		})
	}
}
