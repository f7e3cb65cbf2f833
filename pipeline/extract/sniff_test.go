package extract_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

// sniffTests are SniffBytes inputs and their types; TypeUnknown means ErrUnsupported.
var sniffTests = []struct {
	name string
	in   string
	want extract.Type
}{
	{"pdf", "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", extract.TypePDF},
	{"pdf not at 0", " %PDF-1.7\n", extract.TypeText},
	{"pdf after bom", "\xef\xbb\xbf%PDF-1.7\n", extract.TypeText},
	{"docx zip", "PK\x03\x04\x14\x00\x00\x00\x08\x00", extract.TypeDOCX},
	{"empty zip", "PK\x05\x06" + strings.Repeat("\x00", 18), extract.TypeUnknown},
	{"png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", extract.TypeUnknown},
	{"jpeg", "\xff\xd8\xff\xe0\x00\x10JFIF", extract.TypeUnknown},
	{"gif", "GIF89a\x01\x00\x01\x00\x00\x00\x00", extract.TypeUnknown},
	{"elf", "\x7fELF\x02\x01\x01", extract.TypeUnknown},
	{"exe", "MZ\x90\x00\x03\x00\x00\x00", extract.TypeUnknown},
	{"gzip", "\x1f\x8b\x08\x00", extract.TypeUnknown},
	{"utf16le bom", "\xff\xfeh\x00i\x00", extract.TypeText},
	{"utf16be bom", "\xfe\xff\x00h\x00i", extract.TypeText},
	{"utf16le", "h\x00e\x00l\x00l\x00o\x00 \x00#\x00 \x00", extract.TypeText},
	{"utf16be html", "\x00<\x00p\x00>\x00h\x00i\x00<\x00/\x00p\x00>", extract.TypeHTML},
	{"utf16le binary", "\xff\xfeh\x00\x01\x00", extract.TypeUnknown},
	{"short text with one nul", "<p>x\x00</p>", extract.TypeUnknown},
	{"windows-1252 quotes", "\x93quoted\x94 and caf\xe9", extract.TypeText},
	{"nul in text", "hello\x00world", extract.TypeUnknown},
	{"latin1 text", "caf\xe9 au lait", extract.TypeText},
	{"latin1 markdown", "# Caf\xe9\n\ntext", extract.TypeMarkdown},
	{"html doctype", "<!DOCTYPE html><html><body>hi", extract.TypeHTML},
	{"html upper", "\r\n  <HTML><BODY>hi", extract.TypeHTML},
	{"html fragment", "<p>Hello</p>", extract.TypeHTML},
	{"html comment", "<!-- c --><div>x</div>", extract.TypeHTML},
	{"html latin1", "<html><meta charset=latin1>caf\xe9", extract.TypeHTML},
	{"html pdf polyglot", "<html><body>%PDF-1.7 1 0 obj</body></html>", extract.TypeHTML},
	{"xhtml", `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml">`, extract.TypeHTML},
	{"svg", `<svg xmlns="http://www.w3.org/2000/svg"><text>%PDF-1.4</text></svg>`, extract.TypeUnknown},
	{"svg behind xml decl", `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg">`, extract.TypeUnknown},
	{"xml", `<?xml version="1.0"?><note><to>Tove</to></note>`, extract.TypeUnknown},
	{"angle text", "<3 plain text", extract.TypeText},
	{"markdown heading", "Intro\n\n# Title\n\ntext", extract.TypeMarkdown},
	{"markdown setext", "Title\n=====\n", extract.TypeMarkdown},
	{"rule under a url", "See https://example.com/page\n--------\nplain text follows", extract.TypeText},
	{"rule alone", "notes\n\n--------\nmore notes", extract.TypeText},
	{"readme opening with html", "<p align=\"center\">\n  <img src=\"logo.png\">\n</p>\n\n# Project\n\nIt does things.\n", extract.TypeMarkdown},
	{"readme div and fence", "<div align=\"center\"><b>x</b></div>\n\n```sh\ngo install x\n```\n", extract.TypeMarkdown},
	{"readme opening with a badge line", "<div align=\"center\"><img src=\"l.svg\"></div>\n\n[![ci](https://x/b.svg)](https://x)\n", extract.TypeMarkdown},
	{"html fragment with shell comments in pre", "<div>\n<pre>\n# install\nmake\n</pre>\n</div>", extract.TypeHTML},
	{"html page with hash text", "<html><body>\n# not a heading in HTML\n</body></html>", extract.TypeHTML},
	{"markdown list", "Shopping:\n- eggs\n- milk\n", extract.TypeMarkdown},
	{"markdown link", "see [docs](https://example.com)", extract.TypeMarkdown},
	{"markdown fence", "```go\nx := 1\n```", extract.TypeMarkdown},
	{"plain", "Just a sentence.\r\nAnother one.\f", extract.TypeText},
	{"hashtag not heading", "#hashtag and #another", extract.TypeText},
	{"bom text", "\xef\xbb\xbfplain", extract.TypeText},
	{"rune cut at 512", strings.Repeat("a", 511) + "é", extract.TypeText},
	{"lone lead byte: windows-1252", strings.Repeat("a", 100) + "\xc3" + strings.Repeat("x", 600), extract.TypeText},
	{"control byte", "text\x01text", extract.TypeUnknown},
	{"nul after 512", strings.Repeat("a", 512) + "\x00", extract.TypeText},
}

func TestSniffBytes(t *testing.T) {
	t.Parallel()
	for _, tt := range sniffTests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := extract.SniffBytes([]byte(tt.in))
			if tt.want == extract.TypeUnknown {
				if !errors.Is(err, extract.ErrUnsupported) || got != extract.TypeUnknown {
					t.Fatalf("SniffBytes = %q, %v; want ErrUnsupported", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("SniffBytes = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// scripts are texts in several scripts, to be cut at every byte offset.
var scripts = map[string]string{
	"korean":   "옛날 옛적에 호랑이가 살았습니다. 그 호랑이는 산에서 내려와 마을로 갔습니다. ",
	"chinese":  "从前有一座山，山里有一座庙，庙里有个老和尚在给小和尚讲故事。",
	"japanese": "むかしむかし、あるところに、おじいさんとおばあさんが住んでいました。",
	"emoji":    "Launch 🚀 done ✅ thanks 🙏🏽 family 👨‍👩‍👧‍👦 ",
	"greek":    "Μια φορά κι έναν καιρό ζούσε ένας βασιλιάς. ",
	"arabic":   "كان يا ما كان في قديم الزمان ",
}

// TestSniffBytes_UTF8CutAnywhere: UTF-8 text in any script is text
// wherever the sniff window's end cuts a character.
func TestSniffBytes_UTF8CutAnywhere(t *testing.T) {
	t.Parallel()
	for name, text := range scripts {
		body := strings.Repeat(text, 1+2*extract.SniffLen/len(text))
		for shift := range 8 {
			in := strings.Repeat("a", shift) + body
			if got, err := extract.SniffBytes([]byte(in)); err != nil || got != extract.TypeText {
				t.Errorf("%s shifted by %d: SniffBytes = %q, %v; want text", name, shift, got, err)
			}
		}
	}
}

// TestSniffBytes_Binary: what is not text is refused as binary, saying so.
func TestSniffBytes_Binary(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"\x89PNG\r\n\x1a\n\x00", "MZ\x90\x00\x03", "hello\x00world"} {
		if _, err := extract.SniffBytes([]byte(in)); !errors.Is(err, extract.ErrBinary) || !strings.Contains(err.Error(), "binary") {
			t.Errorf("SniffBytes(%q) = %v; want ErrBinary", in, err)
		}
	}
}

func TestSniffBytes_Empty(t *testing.T) {
	t.Parallel()
	_, err := extract.SniffBytes(nil)
	if !errors.Is(err, extract.ErrEmpty) || !errors.Is(err, extract.ErrUnsupported) {
		t.Fatalf("err = %v, want ErrEmpty wrapping ErrUnsupported", err)
	}
}

func TestSniff_ReadsAtMost512(t *testing.T) {
	t.Parallel()
	r := &countingReader{r: bytes.NewReader(xt.ProsePDF(2).Bytes())}
	typ, err := extract.Sniff(r)
	if err != nil || typ != extract.TypePDF {
		t.Fatalf("Sniff = %q, %v", typ, err)
	}
	if r.n > extract.SniffLen {
		t.Fatalf("read %d bytes", r.n)
	}
}

func TestSniff_ReadError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	if _, err := extract.Sniff(errReader{boom}); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
}

func TestSniffBytes_NoAllocs(t *testing.T) {
	head := []byte("<!DOCTYPE html><html><title>x</title>" + strings.Repeat("text ", 100))
	if n := testing.AllocsPerRun(100, func() { _, _ = extract.SniffBytes(head) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}

type countingReader struct {
	r interface{ Read([]byte) (int, error) }
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestType_MIME(t *testing.T) {
	t.Parallel()
	for _, typ := range []extract.Type{extract.TypePDF, extract.TypeDOCX, extract.TypeHTML, extract.TypeMarkdown, extract.TypeText} {
		if typ.MIME() == "" {
			t.Errorf("%s has no MIME type", typ)
		}
	}
	if extract.TypeUnknown.MIME() != "" {
		t.Error("TypeUnknown has a MIME type")
	}
}

// A README that opens with an HTML block longer than the sniff window is sniffed as HTML; read
// whole, it is Markdown, and is extracted as Markdown: its heading is the title and its lines
// are kept, not flattened onto one. A real HTML page or fragment stays HTML.
func TestExtract_MarkdownOpeningWithLongHTMLBlock(t *testing.T) {
	t.Parallel()
	readme := "<p align=\"center\">\n<picture>\n" +
		strings.Repeat("  <source media=\"(prefers-color-scheme: dark)\" srcset=\".github/images/logo-dark.png\">\n", 8) +
		"</picture>\n</p>\n\nGet values quickly.\n\n## Getting started\n\n```sh\ngo get example.com/x\n```\n\nMore text.\n"
	for _, tc := range []struct {
		name, src string
		sniffed   extract.Type
		want      extract.Type
		title     string
	}{
		{"readme", readme, extract.TypeHTML, extract.TypeMarkdown, "Getting started"},
		{"html page", "<!DOCTYPE html><html><body>" + strings.Repeat("<p>x</p>\n", 80) + "\n## not markdown\n</body></html>", extract.TypeHTML, extract.TypeHTML, ""},
		{"html fragment with pre", "<div>" + strings.Repeat("<p>x</p>\n", 80) + "<pre>\n# a shell comment\n</pre></div>", extract.TypeHTML, extract.TypeHTML, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typ, err := extract.SniffBytes([]byte(tc.src))
			if err != nil || typ != tc.sniffed {
				t.Fatalf("sniffed %q, %v; want %q (the Markdown lies past the sniff window)", typ, err, tc.sniffed)
			}
			doc, err := extract.Extract(t.Context(), typ, strings.NewReader(tc.src), int64(len(tc.src)), extract.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if doc.Type != tc.want || doc.Title != tc.title {
				t.Fatalf("extracted as %q titled %q, want %q titled %q", doc.Type, doc.Title, tc.want, tc.title)
			}
			if tc.want == extract.TypeMarkdown && !strings.Contains(doc.Pages[0].Text, "\n## Getting started\n") {
				t.Errorf("Markdown lines not kept:\n%s", doc.Pages[0].Text)
			}
		})
	}
}

// A Markdown document's title is its top heading, links reduced to their text.
func TestExtract_MarkdownTitle(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]string{
		"### [Sponsor](https://example.com/s)\n\n# Overview\n\n## Commands\n": "Overview",
		"## History\n\n```sh\n# a comment\n```\n\n## Usage\n":                 "History",
		"Intro\n\nName\n----\n\n# [Real](https://x) name\n":                   "Real name",
		"Tool\n====\n\n# Later\n":                                             "Tool",
		"no heading at all\n":                                                 "",
	} {
		doc, err := extract.Extract(t.Context(), extract.TypeMarkdown, strings.NewReader(src), int64(len(src)), extract.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if doc.Title != want {
			t.Errorf("title of %q = %q, want %q", src, doc.Title, want)
		}
	}
}
