package extract_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

// A /Title that refers to anything but a string (a stream, which PDFium would inflate whole as
// the title, or a reference on to one) is not read, with a warning; the rest of the document
// is. One that refers to a string is read.
func TestExtract_TitleRefNotString(t *testing.T) {
	t.Parallel()
	const n = 64 << 10
	tests := []struct {
		name, title, page string
		pdf               []byte
	}{
		{"a stream", "", "A title stream", xt.StreamTitlePDF(n, false)},
		{"a reference to a stream", "", "A title stream", xt.StreamTitlePDF(n, true)},
		{"a stream, from an object stream", "", "Object streams", xt.ObjStmPDF{Info: "<< /Title 8 0 R >>", Stream: n}.Bytes()},
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
				t.Errorf("title %q (%d bytes), want %q", doc.Title[:min(len(doc.Title), 40)], len(doc.Title), tt.title)
			}
			unread := len(doc.Warnings) == 1 && strings.HasPrefix(doc.Warnings[0], "title not read: ")
			if tt.title == "" && !unread || tt.title != "" && len(doc.Warnings) != 0 {
				t.Errorf("warnings %q", doc.Warnings)
			}
			if len(doc.Pages) != 1 || doc.Pages[0].Text != tt.page {
				t.Errorf("pages %+v", doc.Pages)
			}
		})
	}
}

// The check finds references as PDF writes them and every definition of their objects.
func TestTitleUnread_refs(t *testing.T) {
	t.Parallel()
	const stream = "7 0 obj << /Length 5 >> stream\nxxxxx\nendstream endobj\n"
	var many strings.Builder
	for i := range 4097 {
		fmt.Fprintf(&many, "<< /Title %d 0 R >>\n", 100+i)
	}
	tests := []struct {
		name, data string
		unread     bool
	}{
		{"a string", "6 0 obj << /Title 7 0 R >> endobj\n7 0 obj (x) endobj\n", false},
		{"a stream", "6 0 obj << /Title 7 0 R >> endobj\n" + stream, true},
		{"comments between the tokens", "6 0 obj << /Title 7 %c\n0 % d\nR >> endobj\n" + stream, true},
		{"a string, then a stream", "6 0 obj << /Title 7 0 R >> endobj\n7 0 obj (x) endobj\n" + stream, true},
		{"a reference on", "6 0 obj << /Title 7 0 R >> endobj\n7 0 obj 8 0 R endobj\n", true},
		{"a value too far to read", "6 0 obj << /Title " + strings.Repeat(" ", 2000) + "7 0 R >> endobj\n", true},
		{"too many references", many.String(), true},
		{"a direct string", "6 0 obj << /Title (x) >> endobj\n" + stream, false},
		{"another key", "6 0 obj << /Subject 7 0 R >> endobj\n" + stream, false},
	}
	for _, tt := range tests {
		if got := extract.TitleUnread([]byte(tt.data)); (got != "") != tt.unread {
			t.Errorf("%s: titleUnread = %q, want unread %v", tt.name, got, tt.unread)
		}
	}
}
