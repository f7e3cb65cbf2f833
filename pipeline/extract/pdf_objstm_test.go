package extract_test

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

// The title check reads object streams: a /Title string there over the bound, directly or
// through a reference the stream's table resolves, stops the title being read; a stream it
// cannot read does too; a broken one gives what inflates of it, and never a panic.
func TestObjStmTitle(t *testing.T) {
	t.Parallel()
	const limit = 100
	info := func(title string) string { return "<< /Title " + title + " /Producer (x) >>" }
	tests := []struct {
		name string
		pdf  xt.ObjStmPDF
		want string // "" or the start of the reason
	}{
		{"short literal", xt.ObjStmPDF{Info: info("(short)")}, ""},
		{"literal at the bound", xt.ObjStmPDF{Info: info("(%FILL%)"), Fill: limit - 2}, ""},
		{"literal over the bound", xt.ObjStmPDF{Info: info("(%FILL%)"), Fill: limit - 1}, "its string"},
		{"escapes and nesting inside the bound", xt.ObjStmPDF{Info: info(`(a\) (b (c)) \\)` + strings.Repeat(" ", 200))}, ""},
		{"an escaped paren does not end it", xt.ObjStmPDF{Info: info(`(a\) %FILL%)`), Fill: limit}, "its string"},
		{"hex over the bound", xt.ObjStmPDF{Info: info("<FEFF%FILL%>"), Fill: limit, FillByte: '4'}, "its string"},
		{"no space after the key", xt.ObjStmPDF{Info: "<</Title(%FILL%)>>", Fill: limit}, "its string"},
		{"escaped name", xt.ObjStmPDF{Info: "<< /Ti#74le (%FILL%) >>", Fill: limit}, "its string"},
		{"a long string read past, then the title", xt.ObjStmPDF{Info: `<< /Subject (a(%FILL%\\) b) /Title (%FILL%) >>`, Fill: 2 * limit, FillByte: 'x'}, "its string"},
		{"an unbalanced string swallows the next object", xt.ObjStmPDF{Info: "<< /Subject (%FILL%) /Title 8 0 R >>", Extra: []string{"(long)"}, Fill: 2 * limit, FillByte: '('}, "object stream not checked: object 8 starts inside"},
		{"under another key", xt.ObjStmPDF{Info: "<< /Subject (%FILL%) /Title (t) >>", Fill: limit}, ""},
		{"in a comment", xt.ObjStmPDF{Info: "<< /Title (t) %(%FILL%\n>>", Fill: limit}, ""},
		{"reference, long", xt.ObjStmPDF{Info: info("8 0 R"), Extra: []string{"(%FILL%)"}, Fill: limit}, "its string"},
		{"reference, short", xt.ObjStmPDF{Info: info("8 0 R"), Extra: []string{"(short)"}}, ""},
		{"reference after the string", xt.ObjStmPDF{Info: "<< >>", Extra: []string{"<%FILL%>", "<< /Title 8 0 R >>"}, Fill: limit, FillByte: 'a'}, "its string"},
		{"long object no title refers to", xt.ObjStmPDF{Info: info("9 0 R"), Extra: []string{"(%FILL%)", "(t)"}, Fill: limit}, ""},
		{"1 GiB", xt.ObjStmPDF{Info: info("(%FILL%)"), Fill: 1 << 30}, "its string"},
		{"padded past 64 MiB", xt.ObjStmPDF{Info: info("(t)"), Pad: 64 << 20}, "object stream not checked: object streams inflate to over"},
		{"another filter", xt.ObjStmPDF{Info: info("(t)"), Filter: "/ASCIIHexDecode"}, "object stream not checked: filter /ASCIIHexDecode"},
		{"filter by reference", xt.ObjStmPDF{Info: info("(t)"), Filter: "9 0 R"}, "object stream not checked: /Filter 9 … R"},
		{"another entry by reference", xt.ObjStmPDF{Info: info("(%FILL%)"), Fill: limit, Filter: "/FlateDecode /Length2 9 0 R"}, "its string"},
		{"two filters", xt.ObjStmPDF{Info: info("(t)"), Filter: "[/FlateDecode /FlateDecode]"}, "object stream not checked"},
		{"offsets inside tokens", xt.ObjStmPDF{Info: info("(t)"), Shift: 1}, "object stream not checked: object 6 starts inside"},
		{"offsets past the end", xt.ObjStmPDF{Info: info("(t)"), Shift: 1 << 20}, ""},
		{"table shorter than /N", xt.ObjStmPDF{Info: info("(t)"), N: 5}, "object stream not checked: its table"},
		{"/N over the bound", xt.ObjStmPDF{Info: info("(t)"), N: 1 << 20}, "object stream not checked: /N"},
		{"/First past the data", xt.ObjStmPDF{Info: info("(%FILL%)"), Fill: limit, First: 1 << 20}, ""},
		{"truncated in the title", xt.ObjStmPDF{Info: info("(%FILL%)"), Fill: 1 << 20, Cut: 200}, "its string"},
		{"truncated before the title", xt.ObjStmPDF{Info: info("(%FILL%)"), Fill: 1 << 20, Cut: 12}, ""},
		{"not zlib", xt.ObjStmPDF{Info: info("(%FILL%)"), Fill: 1 << 20, Cut: 1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := extract.ObjStmTitle(tt.pdf.Bytes(), limit)
			if tt.want == "" && got != "" || !strings.HasPrefix(got, tt.want) {
				t.Errorf("ObjStmTitle = %q, want %q", got, tt.want)
			}
		})
	}
}

// Titles in object streams are read exactly as in plain objects (PDFium decodes them); one
// over the bound is not read, with a warning, and the rest of the document is.
func TestExtract_ObjStmTitle(t *testing.T) {
	t.Parallel()
	over := "title not read: its string in an object stream is over 65536 bytes"
	tests := []struct {
		name, title, warning string
		pdf                  xt.ObjStmPDF
	}{
		{"literal with escapes", "Hello (world) café\nnext", "", xt.ObjStmPDF{Info: `<< /Title (Hello \(world\) caf\351\nnext) >>`}},
		{"UTF-16BE hex with a BOM", "Hi ✓", "", xt.ObjStmPDF{Info: "<< /Title <FEFF00480069 0020 2713> >>"}},
		{"reference", "Referenced", "", xt.ObjStmPDF{Info: "<< /Title 8 0 R >>", Extra: []string{"(Referenced)"}}},
		{"under the bound", strings.Repeat("T", extract.MaxTitleBytes), "", xt.ObjStmPDF{Info: "<< /Title (%FILL%) >>", Fill: extract.MaxPDFTitleStringBytes - 2}},
		{"over the bound", "", over, xt.ObjStmPDF{Info: "<< /Title (%FILL%) >>", Fill: extract.MaxPDFTitleStringBytes - 1}},
		{"30 MB", "", over, xt.ObjStmPDF{Info: "<< /Title (%FILL%) >>", Fill: 30 << 20}},
		{"1 GiB", "", over, xt.ObjStmPDF{Info: "<< /Title (%FILL%) >>", Fill: 1 << 30}},
		{"truncated", "", "", xt.ObjStmPDF{Info: "<< /Title (%FILL%) >>", Fill: 30 << 20, Cut: 12}},
		{"offsets inside tokens", "", "title not read: object stream not checked: object 6 starts inside another token", xt.ObjStmPDF{Info: "<< /Title (t) >>", Shift: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc, err := extractBytes(t, extract.TypePDF, tt.pdf.Bytes(), extract.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tt.pdf.Fill == 0 && len(tt.pdf.Extra) == 0 && tt.pdf.Shift == 0 && tt.pdf.Cut == 0 { // the same dictionary as a plain object
				plain, err := extractBytes(t, extract.TypePDF, xt.PlainInfoPDF(tt.pdf.Info), extract.Options{})
				if err != nil || plain.Title != doc.Title {
					t.Errorf("title %q in an object stream, %q (%v) in a plain object", doc.Title, plain.Title, err)
				}
			}
			if doc.Title != tt.title {
				t.Errorf("title %q (%d bytes), want %q", doc.Title[:min(len(doc.Title), 40)], len(doc.Title), tt.title[:min(len(tt.title), 40)])
			}
			if tt.warning == "" && len(doc.Warnings) != 0 || tt.warning != "" && (len(doc.Warnings) != 1 || doc.Warnings[0] != tt.warning) {
				t.Errorf("warnings %q, want %q", doc.Warnings, tt.warning)
			}
			if len(doc.Pages) != 1 || doc.Pages[0].Text != "Object streams" {
				t.Errorf("pages %+v", doc.Pages)
			}
		})
	}
}

// A 30 MB title in an object stream costs the engine no more than a short one: PDFium never
// parses it (before: its memory grew by hundreds of MiB, and the parse ran for seconds).
func TestExtract_ObjStmTitleEngineMemory(t *testing.T) {
	t.Parallel()
	short, err := extract.EngineMemoryAfter(engine, xt.ObjStmPDF{Info: "<< /Title (short) >>"}.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	long, err := extract.EngineMemoryAfter(engine, xt.ObjStmTitlePDF(30<<20))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("engine memory %d KiB with a 30 MB title in an object stream, %d KiB with a short one", long>>10, short>>10)
	if long > short+8<<20 {
		t.Errorf("a 30 MB title grew the engine's memory to %d MiB (a short one: %d MiB)", long>>20, short>>20)
	}
}

// The check itself holds a buffer, a zlib reader and the stream's table, whatever the stream
// inflates to. Not parallel: it counts the process's allocations.
func TestTitleUnread_ObjStmAllocs(t *testing.T) {
	for _, n := range []int64{30 << 20, 1 << 30} {
		data := xt.ObjStmTitlePDF(n)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		why := extract.TitleUnread(data)
		runtime.ReadMemStats(&after)
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("%d MiB title: %q, %d KiB allocated", n>>20, why, allocated>>10)
		if why == "" {
			t.Errorf("%d MiB title let through", n>>20)
		}
		if allocated > 1<<20 {
			t.Errorf("%d MiB title: the check allocated %d KiB (want under 1 MiB)", n>>20, allocated>>10)
		}
	}
}

// PDFium starts a stream's data at the line after the keyword, whatever ends the line.
func TestObjStmTitle_StreamKeyword(t *testing.T) {
	t.Parallel()
	data := xt.ObjStmPDF{Info: "<< /Title (%FILL%) >>", Fill: 1000}.Bytes()
	for _, eol := range []string{"\n", "\r\n", "\r", " \t\r\n"} {
		variant := bytes.Replace(data, []byte("/FlateDecode >>\nstream\n"), []byte("/FlateDecode >>\nstream"+eol), 1)
		if got := extract.ObjStmTitle(variant, 100); !strings.HasPrefix(got, "its string") {
			t.Errorf("stream keyword, then %q: %q", eol, got)
		}
	}
}
