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
