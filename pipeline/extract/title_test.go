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

// A PDF /Title of any length as written is read and cut to MaxTitleBytes, its key written
// plainly or with name escapes (/Ti#74le is /Title to PDFium); the pages are parsed as usual.
func TestExtract_PDFTitleAnyLength(t *testing.T) {
	t.Parallel()
	for _, data := range [][]byte{xt.LongTitlePDF(64<<10 + 1), xt.LongInfoPDF("Ti#74le", 64<<10+1), xt.LongTitlePDF(1 << 20)} {
		doc, err := extractBytes(t, extract.TypePDF, data, extract.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if doc.Title != strings.Repeat("T", extract.MaxTitleBytes) || len(doc.Warnings) != 0 {
			t.Errorf("title of %d bytes, warnings %q; want %d bytes of it", len(doc.Title), doc.Warnings, extract.MaxTitleBytes)
		}
		if len(doc.Pages) != 1 || doc.Pages[0].Text != "A long title" {
			t.Errorf("pages %+v", doc.Pages)
		}
	}
}
