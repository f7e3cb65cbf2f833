// Package extracttest generates documents for tests of package extract and of the pipeline
// above it: well-formed PDFs (standard 14 fonts, WinAnsi text, any layout), DOCX files, and the
// malformed and hostile inputs of the bomb table, all built in memory
// by code, never downloaded.
package extracttest

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf16"

	"golang.org/x/text/encoding/charmap"
)

// PDF describes a PDF to generate with Bytes.
type PDF struct {
	// Title goes to the document information dictionary.
	Title string
	// Pages in order; at least one is written.
	Pages []PDFPage
	// Catalog holds raw extra entries for the catalog dictionary, e.g. "/OpenAction 9 0 R".
	Catalog string
	// Extra holds raw extra object bodies; the i-th is object number p.ExtraRef(i).
	Extra []string
	// Encrypt adds a standard security handler whose user password is not empty, so the file
	// cannot be opened without it.
	Encrypt bool
}

// PDFPage is one US Letter page (612×792 points).
type PDFPage struct {
	// Text items drawn on the page.
	Text []PDFText
	// Content holds raw content-stream operators appended after the text (lines, images).
	Content string
}

// PDFText is one line of text at (X, Y) points from the bottom left.
type PDFText struct {
	X, Y float64
	// Size in points (default 12).
	Size float64
	// Font is one of Fonts (default "Helvetica").
	Font string
	// Text is encoded in WinAnsi; runes it lacks become '?'.
	Text string
}

// Fonts are the standard 14 fonts the generator declares, all with WinAnsiEncoding.
var Fonts = []string{"Helvetica", "Helvetica-Bold", "Times-Roman", "Courier"}

// Object numbers: 1 catalog, 2 page tree, 3 info, 4.. fonts, then two per page (page, content),
// then Extra, then the encryption dictionary.
const firstFontObj = 4

func (p PDF) firstPageObj() int { return firstFontObj + len(Fonts) }

func (p PDF) pages() []PDFPage {
	if len(p.Pages) == 0 {
		return []PDFPage{{}}
	}
	return p.Pages
}

// ExtraRef returns the object number of p.Extra[i].
func (p PDF) ExtraRef(i int) int { return p.firstPageObj() + 2*len(p.pages()) + i }

// Bytes renders the PDF: header, objects, a classic cross-reference table, trailer.
func (p PDF) Bytes() []byte {
	w := &pdfWriter{}
	w.buf.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	pages := p.pages()
	kids := make([]string, len(pages))
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", p.firstPageObj()+2*i)
	}
	w.object(fmt.Sprintf("<< /Type /Catalog /Pages 2 0 R %s >>", p.Catalog))
	w.object(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)))
	w.object(fmt.Sprintf("<< /Title %s /Producer (docket extracttest) >>", pdfTextString(p.Title)))
	for _, f := range Fonts {
		w.object(fmt.Sprintf("<< /Type /Font /Subtype /Type1 /BaseFont /%s /Encoding /WinAnsiEncoding >>", f))
	}
	var fontRes strings.Builder
	for i := range Fonts {
		fmt.Fprintf(&fontRes, "/F%d %d 0 R ", i+1, firstFontObj+i)
	}
	for i, pg := range pages {
		w.object(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << %s>> >> /Contents %d 0 R >>",
			fontRes.String(), p.firstPageObj()+2*i+1))
		w.stream("", []byte(pg.content()))
	}
	for _, x := range p.Extra {
		w.object(x)
	}
	trailer := fmt.Sprintf("/Size %d /Root 1 0 R /Info 3 0 R", len(w.offsets)+1)
	if p.Encrypt {
		n := w.object("<< /Filter /Standard /V 1 /R 2 /P -44 " +
			"/O <" + strings.Repeat("5a", 32) + "> /U <" + strings.Repeat("a5", 32) + "> >>")
		trailer = fmt.Sprintf("/Size %d /Root 1 0 R /Info 3 0 R /Encrypt %d 0 R /ID [<%s> <%s>]",
			n+1, n, strings.Repeat("01", 16), strings.Repeat("01", 16))
	}
	w.finish(trailer)
	return w.buf.Bytes()
}

// content renders a page's content stream.
func (pg PDFPage) content() string {
	var b strings.Builder
	for _, t := range pg.Text {
		size := t.Size
		if size == 0 {
			size = 12
		}
		fmt.Fprintf(&b, "BT /F%d %g Tf %g %g Td %s Tj ET\n", fontIndex(t.Font)+1, size, t.X, t.Y, pdfString(t.Text))
	}
	b.WriteString(pg.Content)
	return b.String()
}

func fontIndex(name string) int {
	for i, f := range Fonts {
		if f == name {
			return i
		}
	}
	return 0
}

// winAnsi encodes s in WinAnsi (Windows-1252), '?' for what it lacks.
func winAnsi(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if c, ok := charmap.Windows1252.EncodeRune(r); ok {
			out = append(out, c)
		} else {
			out = append(out, '?')
		}
	}
	return out
}

// pdfTextString encodes s for the information dictionary: UTF-16BE with a byte order mark.
func pdfTextString(s string) string {
	var b strings.Builder
	b.WriteString("<FEFF")
	for _, u := range utf16.Encode([]rune(s)) {
		fmt.Fprintf(&b, "%04X", u)
	}
	b.WriteByte('>')
	return b.String()
}

// pdfString encodes s as a WinAnsi literal string, escaping what must be.
func pdfString(s string) string {
	enc := winAnsi(s)
	var b strings.Builder
	b.WriteByte('(')
	for _, c := range enc {
		switch c {
		case '(', ')', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(')')
	return b.String()
}

// pdfWriter lays out numbered objects and remembers their offsets for the xref table.
type pdfWriter struct {
	buf     bytes.Buffer
	offsets []int
}

// object writes body as the next object and returns its number.
func (w *pdfWriter) object(body string) int {
	w.offsets = append(w.offsets, w.buf.Len())
	n := len(w.offsets)
	fmt.Fprintf(&w.buf, "%d 0 obj\n%s\nendobj\n", n, body)
	return n
}

// stream writes a stream object with the given extra dictionary entries and returns its number.
func (w *pdfWriter) stream(dict string, data []byte) int {
	return w.streamLength(dict, data, fmt.Sprint(len(data)))
}

// streamLength is stream with a given /Length value, true or not.
func (w *pdfWriter) streamLength(dict string, data []byte, length string) int {
	w.offsets = append(w.offsets, w.buf.Len())
	n := len(w.offsets)
	fmt.Fprintf(&w.buf, "%d 0 obj\n<< /Length %s %s >>\nstream\n", n, length, dict)
	w.buf.Write(data)
	w.buf.WriteString("\nendstream\nendobj\n")
	return n
}

// finish writes the xref table for all objects and the trailer.
func (w *pdfWriter) finish(trailer string) {
	start := w.buf.Len()
	fmt.Fprintf(&w.buf, "xref\n0 %d\n0000000000 65535 f \n", len(w.offsets)+1)
	for _, off := range w.offsets {
		fmt.Fprintf(&w.buf, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&w.buf, "trailer\n<< %s >>\nstartxref\n%d\n%%%%EOF\n", trailer, start)
}
