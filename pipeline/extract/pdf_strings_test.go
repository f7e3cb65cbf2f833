package extract_test

import (
	"strings"
	"testing"

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

func TestLongString(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 200)
	tests := []struct {
		name string
		data string
		want bool
	}{
		{"short literal", "<< /Title (" + long[:50] + ") >>", false},
		{"long literal", "<< /Title (" + long + ") >>", true},
		{"nested and escaped", "(" + strings.Repeat("(a\\)", 40) + strings.Repeat(")", 40) + ")", true},
		{"escaped parens end late", "(a\\) " + long + ")", true},
		{"many short strings", strings.Repeat("(abc) ", 100), false},
		{"long hex", "<" + strings.Repeat("41", 100) + ">", true},
		{"dictionaries are not hex strings", "<<" + strings.Repeat(" /A 1", 100) + ">>", false},
		{"in a stream", "1 0 obj << /Length 210 >>\nstream\n(" + long + ")\nendstream\nendobj", false},
		{"in a comment", "%(" + long + "\n(a)", false},
		{"unterminated", "(" + long, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := extract.LongString([]byte(tt.data), 100); got != tt.want {
				t.Errorf("LongString = %v, want %v", got, tt.want)
			}
		})
	}
}

// A PDF whose /Title is over MaxPDFStringBytes is parsed without its title: PDFium would
// materialise the whole string, several times over, to hand it out (issue 10: a 30 MB title
// cost 1.8 GB).
func TestExtract_HugeTitleNotRead(t *testing.T) {
	t.Parallel()
	doc, err := extractBytes(t, extract.TypePDF, xt.LongTitlePDF(extract.MaxPDFStringBytes+1), extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != "" || len(doc.Warnings) != 1 || !strings.HasPrefix(doc.Warnings[0], "title not read") {
		t.Errorf("title %d bytes, warnings %q", len(doc.Title), doc.Warnings)
	}
	if len(doc.Pages) != 1 || doc.Pages[0].Text != "A long title" {
		t.Errorf("pages %+v", doc.Pages)
	}
}

func TestLongTitle(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 200)
	tests := []struct {
		name string
		data string
		want bool
	}{
		{"short literal", "<< /Title (" + long[:50] + ") >>", false},
		{"long literal", "<< /Title (" + long + ") >>", true},
		{"long literal, no space", "<</Title(" + long + ")>>", true},
		{"long hex", "<< /Title <" + strings.Repeat("41", 100) + "> >>", true},
		{"long, under another key", "<< /Subject (" + long + ") /Title (a) >>", false},
		{"indirect, long", "6 0 obj << /Title 9 0 R >> endobj\n9 0 obj\n(" + long + ")\nendobj", true},
		{"indirect, short", "6 0 obj << /Title 9 0 R >> endobj\n9 0 obj\n(" + long[:50] + ")\nendobj", false},
		{"long object, another reference", "6 0 obj << /Title 9 0 R /Subject 10 0 R >> endobj\n10 0 obj (" + long + ") endobj", false},
		{"escaped key, long literal", "<< /Ti#74le (" + long + ") >>", true},
		{"escaped key, long hex", "<</#54#69#74#6C#65<" + strings.Repeat("41", 100) + ">>>", true},
		{"escaped key, indirect, long", "6 0 obj << /T#69tle 9 0 R >> endobj\n9 0 obj\n(" + long + ")\nendobj", true},
		{"escaped other key, long", "<< /Ti#74les (" + long + ") >>", false},
		{"in a stream", "1 0 obj << /Length 220 >>\nstream\n/Title (" + long + ")\nendstream\nendobj", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := extract.LongTitle([]byte(tt.data), 100); got != tt.want {
				t.Errorf("LongTitle = %v, want %v", got, tt.want)
			}
		})
	}
}

// A PDF whose /Title string is over MaxPDFTitleStringBytes is parsed without its title (one
// just under MaxPDFStringBytes took the engine past the parse deadline and cost 100-130 MiB);
// one under it is read, cut to MaxTitleBytes.
func TestExtract_TitleCheck(t *testing.T) {
	t.Parallel()
	doc, err := extractBytes(t, extract.TypePDF, xt.LongTitlePDF(extract.MaxPDFTitleStringBytes+1), extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != "" || len(doc.Warnings) != 1 || !strings.HasPrefix(doc.Warnings[0], "title not read: its string is over") {
		t.Errorf("title %d bytes, warnings %q", len(doc.Title), doc.Warnings)
	}
	if len(doc.Pages) != 1 || doc.Pages[0].Text != "A long title" {
		t.Errorf("pages %+v", doc.Pages)
	}
	// The key written with a name escape is /Title to PDFium: checked as well.
	doc, err = extractBytes(t, extract.TypePDF, xt.LongInfoPDF("Ti#74le", extract.MaxPDFTitleStringBytes+1), extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != "" || len(doc.Warnings) != 1 || !strings.HasPrefix(doc.Warnings[0], "title not read: its string is over") {
		t.Errorf("/Ti#74le: title %d bytes, warnings %q; want it not read", len(doc.Title), doc.Warnings)
	}
	doc, err = extractBytes(t, extract.TypePDF, xt.LongTitlePDF(extract.MaxPDFTitleStringBytes-2), extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != strings.Repeat("T", extract.MaxTitleBytes) || len(doc.Warnings) != 0 {
		t.Errorf("title %d bytes, warnings %q; want the title read", len(doc.Title), doc.Warnings)
	}
}
