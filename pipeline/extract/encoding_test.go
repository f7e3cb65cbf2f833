package extract_test

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"

	"github.com/docketq/docket/pipeline/extract"
)

// TestExtract_Encodings: text in the encodings people's files are in is
// sniffed as text, converted to UTF-8 with a warning that says from what,
// and reads as the original.
func TestExtract_Encodings(t *testing.T) {
	t.Parallel()
	const latin = "Grüße aus Köln, café au lait — “quoted” for 12 €.\nSecond line."
	encode := func(e encoding.Encoding, s string) string {
		out, err := e.NewEncoder().String(s)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	tests := []struct {
		name, in, want, from string
	}{
		{"utf-8", latin, latin, ""},
		{"utf-8 with bom", "\ufeff" + latin, latin, ""},
		{"windows-1252", encode(charmap.Windows1252, latin), latin, "Windows-1252"},
		{"latin-1", encode(charmap.ISO8859_1, "Grüße aus Köln, café au lait."), "Grüße aus Köln, café au lait.", "Windows-1252"},
		{"utf-16le with bom", encode(unicode.UTF16(unicode.LittleEndian, unicode.UseBOM), latin), latin, "UTF-16LE"},
		{"utf-16be with bom", encode(unicode.UTF16(unicode.BigEndian, unicode.UseBOM), latin), latin, "UTF-16BE"},
		{"utf-16le", encode(unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM), latin), latin, "UTF-16LE"},
		{"utf-16be", encode(unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM), latin), latin, "UTF-16BE"},
		{"korean utf-16le", encode(unicode.UTF16(unicode.LittleEndian, unicode.UseBOM), scripts["korean"]), strings.TrimSpace(scripts["korean"]), "UTF-16LE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			typ, err := extract.SniffBytes([]byte(tt.in))
			if err != nil || typ != extract.TypeText {
				t.Fatalf("SniffBytes = %q, %v; want text", typ, err)
			}
			doc, err := extractBytes(t, typ, []byte(tt.in), extract.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := doc.Text(); got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
			warned := slices.ContainsFunc(doc.Warnings, func(w string) bool { return strings.Contains(w, tt.from) })
			if tt.from != "" && !warned || tt.from == "" && len(doc.Warnings) > 0 {
				t.Errorf("warnings %q, want one naming %q", doc.Warnings, tt.from)
			}
		})
	}
}
