package extract_test

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

// TestExtract_Bombs runs the bomb table in process: every hostile or broken input ends within
// the wall budget with one of its acceptable outcomes, and no panic. pipeline/sandbox runs the
// rows whose memory only a child process's limits bound (TestProcess_Bombs).
func TestExtract_Bombs(t *testing.T) {
	t.Parallel()
	for _, c := range append(xt.PDFCases(), xt.DOCXCases()...) {
		t.Run(c.Type+"/"+c.Name, func(t *testing.T) {
			t.Parallel()
			if typ, err := extract.SniffBytes(c.Data); err != nil || string(typ) != c.Type {
				t.Fatalf("sniffed %q, %v; the case claims %q", typ, err, c.Type)
			}
			var doc *extract.Document
			var err error
			within(t, 10*time.Second, func() {
				doc, err = extractBytes(t, extract.Type(c.Type), c.Data, extract.Options{Timeout: 2 * time.Second})
			})
			got := extract.Reason(err)
			if err != nil && got == "" {
				t.Fatalf("error %v is not a permanent input error", err)
			}
			if !slices.Contains(c.Want, got) {
				t.Fatalf("outcome %q (%v), want one of %q", got, err, c.Want)
			}
			if err == nil && doc.ActiveContent != c.Active {
				t.Errorf("ActiveContent = %v, want %v", doc.ActiveContent, c.Active)
			}
			t.Logf("outcome %q: %v", got, err)
		})
	}
}

// TestInspectDOCX checks the container verdicts without parsing any XML.
func TestInspectDOCX(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"valid", xt.DOCX{Body: xt.Para("hi")}.Bytes(), ""},
		{"stored entries", xt.RawZip([]xt.RawEntry{{Name: "word/", Data: nil}, {Name: "word/document.xml", Data: []byte("<x/>")}}, 0), ""},
		{"no main part", xt.RawZip([]xt.RawEntry{{Name: "word/other.xml", Data: []byte("x")}}, 0), "unsupported_type"},
		{"not a zip", []byte("PK\x03\x04 but nothing else"), "unsupported_type"},
		{"tiny", []byte("PK"), "unsupported_type"},
		{"traversal", xt.RawZip([]xt.RawEntry{{Name: "word/document.xml", Data: []byte("x")}, {Name: "word/../../x", Data: []byte("x")}}, 0), "malformed"},
		{"dot element", xt.RawZip([]xt.RawEntry{{Name: "word/document.xml", Data: []byte("x")}, {Name: "./x", Data: []byte("x")}}, 0), "malformed"},
		{"nul in name", xt.RawZip([]xt.RawEntry{{Name: "word/document.xml", Data: []byte("x")}, {Name: "a\x00b", Data: []byte("x")}}, 0), "malformed"},
		{"ratio", xt.ZipBombDOCX(1<<20, 32<<20), "too_large"},
		{"claims 10^7", xt.RawZip([]xt.RawEntry{{Name: "word/document.xml", Data: []byte("x")}}, 10_000_000), "too_large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &countingReaderAt{r: bytes.NewReader(tt.data)}
			err := extract.InspectDOCX(r, int64(len(tt.data)))
			if got := extract.Reason(err); got != tt.want {
				t.Fatalf("InspectDOCX: %q (%v), want %q", got, err, tt.want)
			}
			if budget := 6*int64(len(tt.data)) + 64<<10; r.n.Load() > budget {
				t.Fatalf("read %d bytes of a %d-byte file", r.n.Load(), len(tt.data))
			}
		})
	}
}

func TestExtract_DOCXLimits(t *testing.T) {
	t.Parallel()
	body := ""
	for range 5 {
		body += xt.Para("page") + xt.PageBreak()
	}
	data := xt.DOCX{Body: body}.Bytes()
	if _, err := extractBytes(t, extract.TypeDOCX, data, extract.Options{MaxPages: 3}); extract.Reason(err) != "too_large" {
		t.Errorf("5 pages with MaxPages 3: %v", err)
	}
	deep := xt.DOCX{Document: xt.DeepXML(40)}.Bytes()
	if _, err := extractBytes(t, extract.TypeDOCX, deep, extract.Options{DOCX: extract.DOCXLimits{MaxXMLDepth: 20}}); extract.Reason(err) != "malformed" {
		t.Errorf("depth 42 with cap 20: %v", err)
	}
	if _, err := extractBytes(t, extract.TypeDOCX, deep, extract.Options{}); err != nil {
		t.Errorf("depth 42 with the default cap: %v", err)
	}
	big := xt.DOCX{Body: xt.Para(string(bytes.Repeat([]byte("word "), 50_000)))}.Bytes()
	if _, err := extractBytes(t, extract.TypeDOCX, big, extract.Options{DOCX: extract.DOCXLimits{MaxEntrySize: 100_000}}); extract.Reason(err) != "too_large" {
		t.Errorf("250 KB document.xml with a 100 KB cap: %v", err)
	}
	if _, err := extractBytes(t, extract.TypeDOCX, big, extract.Options{MaxTextLength: 1000}); extract.Reason(err) != "too_large" {
		t.Errorf("250 KB of text with a 1000-byte text cap: %v", err)
	}
}
