package extract_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

// A huge HTML <title> or PDF /Title is cut to MaxTitleBytes on a rune
// boundary, as it is read.
func TestExtract_LongTitle(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("Ärger mit dem Titel ", 1<<16) // 1.3 MB, 2-byte runes among 1-byte ones
	for _, tc := range []struct {
		typ  extract.Type
		data []byte
	}{
		{extract.TypeHTML, []byte("<html><head><title>" + long + "</title></head><body><p>body text</p></body></html>")},
		// Under MaxPDFTitleStringBytes as written (a longer one is not read at all).
		{extract.TypePDF, xt.PDF{Title: long[:14000], Pages: []xt.PDFPage{{Text: []xt.PDFText{{X: 72, Y: 700, Text: "body text"}}}}}.Bytes()},
	} {
		t.Run(string(tc.typ), func(t *testing.T) {
			t.Parallel()
			doc, err := extractBytes(t, tc.typ, tc.data, extract.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(doc.Title) > extract.MaxTitleBytes || !utf8.ValidString(doc.Title) || !strings.HasPrefix(doc.Title, "Ärger mit dem Titel") {
				t.Errorf("title of %d bytes (valid UTF-8 %v), want a valid prefix of at most %d", len(doc.Title), utf8.ValidString(doc.Title), extract.MaxTitleBytes)
			}
		})
	}
}
