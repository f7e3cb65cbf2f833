package extract_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

// The parsers' fuzz targets (make fuzz runs them). Their seeds live in testdata/fuzz/<target>/ and
// run in every plain `go test`; `go test -update -run TestFuzzSeeds` regenerates them.

func FuzzSniffType(f *testing.F) {
	f.Add([]byte("%PDF-1.7"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &countingReader{r: bytes.NewReader(data)}
		typ, err := extract.Sniff(r)
		if r.n > extract.SniffLen {
			t.Fatalf("Sniff read %d bytes", r.n)
		}
		typ2, err2 := extract.SniffBytes(data)
		if typ != typ2 || !errors.Is(err, err2) && !errors.Is(err2, err) {
			t.Fatalf("Sniff = %q, %v; SniffBytes = %q, %v", typ, err, typ2, err2)
		}
		switch typ {
		case extract.TypePDF, extract.TypeDOCX, extract.TypeHTML, extract.TypeMarkdown, extract.TypeText:
			if err != nil {
				t.Fatalf("type %q with error %v", typ, err)
			}
		case extract.TypeUnknown:
			if !errors.Is(err, extract.ErrUnsupported) {
				t.Fatalf("no type, error %v", err)
			}
		default:
			t.Fatalf("type %q is not allow-listed", typ)
		}
	})
}

func FuzzInspectDOCX(f *testing.F) {
	f.Add([]byte("PK\x05\x06"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &countingReaderAt{r: bytes.NewReader(data)}
		err := extract.InspectDOCX(r, int64(len(data)))
		if budget := 6*int64(len(data)) + 64<<10; r.n.Load() > budget {
			t.Fatalf("read %d bytes of a %d-byte input", r.n.Load(), len(data))
		}
		if err != nil {
			if !extract.Permanent(err) {
				t.Fatalf("InspectDOCX: non-sentinel error %v", err)
			}
			return
		}
		opts := extract.Options{Timeout: 2 * time.Second, DOCX: extract.DOCXLimits{MaxEntrySize: 1 << 20, MaxXMLDepth: 64}}
		doc, err := extractBytes(t, extract.TypeDOCX, data, opts)
		if err != nil && !extract.Permanent(err) {
			t.Fatalf("Extract: non-sentinel error %v", err)
		}
		if err == nil && (len(doc.Pages) == 0 || !utf8.ValidString(doc.Text())) {
			t.Fatalf("Extract: %d pages, valid UTF-8 %v", len(doc.Pages), utf8.ValidString(doc.Text()))
		}
	})
}

func FuzzExtractPDF(f *testing.F) {
	f.Add([]byte("%PDF-1.4\n%%EOF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const budget = 2 * time.Second
		start := time.Now()
		doc, err := extractBytes(t, extract.TypePDF, data, extract.Options{Timeout: budget, MaxPages: 50})
		if took := time.Since(start); took > budget+time.Second {
			t.Fatalf("took %v with a %v budget", took, budget)
		}
		if err != nil && !extract.Permanent(err) {
			t.Fatalf("non-sentinel error %v", err)
		}
		if err == nil && (len(doc.Pages) == 0 || len(doc.Pages) > 50) {
			t.Fatalf("%d pages", len(doc.Pages))
		}
	})
}

func FuzzNormalize(f *testing.F) {
	f.Add("exam-\nple  ﬁ\r\n\r\n\r\nx")
	f.Fuzz(func(t *testing.T, s string) {
		got := extract.Normalize(s)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 %q", got)
		}
		if again := extract.Normalize(got); again != got {
			t.Fatalf("not idempotent: %q → %q", got, again)
		}
	})
}

// TestFuzzSeeds writes the seed corpora with -update, and otherwise checks they are there.
func TestFuzzSeeds(t *testing.T) {
	t.Parallel()
	seeds := map[string]map[string][]byte{
		"FuzzSniffType": {
			"pdf": []byte("%PDF-1.7\n"), "zip": []byte("PK\x03\x04\x14\x00"), "png": []byte("\x89PNG\r\n\x1a\n"),
			"html": []byte("<!DOCTYPE html><title>x</title>"), "polyglot": []byte("<html>%PDF-1.4</html>"),
			"svg": []byte("<?xml version='1.0'?><svg/>"), "md": []byte("# Title\n\ntext"), "text": []byte("plain\r\ntext"),
			"utf8cut": append(bytes.Repeat([]byte("a"), 511), 0xc3, 0xa9),
		},
		"FuzzInspectDOCX": {
			"valid":   xt.DOCX{Title: "T", Body: xt.Heading("Title", "Hi") + xt.Para("a") + xt.PageBreak() + xt.Table([][]string{{"a", "b"}})}.Bytes(),
			"overlap": xt.OverlapDOCX(), "claims": xt.RawZip(nil, 10_000_000), "traversal": xt.DOCXCases()[5].Data,
			"nomain": xt.RawZip([]xt.RawEntry{{Name: "a", Data: []byte("a")}}, 0), "nested": xt.NestedZip(3),
			"deep": xt.DOCX{Document: xt.DeepXML(100)}.Bytes(), "laughs": xt.DOCX{Document: []byte(xt.BillionLaughs)}.Bytes(),
			"lying": xt.ZipBombDOCX(1<<16, 100),
		},
		"FuzzExtractPDF": {
			"prose": xt.ProsePDF(1).Bytes(), "unicode": xt.UnicodePDF().Bytes(), "table": xt.TablePDF().Bytes(),
			"notext": xt.NoTextPDF().Bytes(), "active": xt.ActivePDF().Bytes(), "encrypted": xt.PDF{Encrypt: true}.Bytes(),
			"prev": xt.CircularPrevPDF(), "length": xt.LengthLiePDF(), "xref": xt.XRefIndexBombPDF(),
			"outline": xt.CircularOutlinePDF(), "truncated": xt.ProsePDF(1).Bytes()[:900],
			"objstm": xt.ObjStmPDF{Info: "<< /Title (Object stream) >>"}.Bytes(), "objstm_cut": xt.ObjStmPDF{Info: "<< /Title (%FILL%) >>", Fill: 1 << 20, Cut: 100}.Bytes(),
		},
		"FuzzNormalize": {"mixed": []byte("A\u00a0b\tc\r\nexam-\nple\f\ufb01\u200b")},
	}
	for target, files := range seeds {
		for name, data := range files {
			path := filepath.Join("testdata", "fuzz", target, name)
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, seedFile(target, data), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("seed missing (run with -update): %v", err)
			}
		}
	}
}

// seedFile encodes one value in the fuzzing engine's corpus format.
func seedFile(target string, data []byte) []byte {
	if target == "FuzzNormalize" {
		return fmt.Appendf(nil, "go test fuzz v1\nstring(%q)\n", data)
	}
	return fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", data)
}
