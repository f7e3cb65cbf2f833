package extracttest

import (
	"bytes"
	"fmt"
	"strings"
)

// Case is one hostile or broken input and what a parser may make of it.
type Case struct {
	Name string
	// Type is the sniffed type the input claims: "pdf" or "docx".
	Type string
	Data []byte
	// Want lists the acceptable outcomes as extract.Reason codes ("malformed", "too_large",
	// "encrypted", "unsupported_type", "timeout"); "" means success is acceptable too (PDFium
	// repairs some damage, and that is a fine answer). PDFium lays out page content at a few
	// MB/s, so a content-stream bomb ends at the memory cap or at the deadline, whichever is first.
	Want []string
	// Active is set when a successful parse must flag active content.
	Active bool
}

// pdfRows returns the PDF rows of the bomb table.
func pdfRows() []row {
	good := ProsePDF(2).Bytes()
	return []row{
		{Name: "truncated", Type: "pdf", build: func() []byte { return good[:len(good)/2] }, Want: []string{"malformed"}},
		{Name: "header only", Type: "pdf", build: func() []byte { return []byte("%PDF-1.7\n%%EOF\n") }, Want: []string{"malformed"}},
		{Name: "garbage after header", Type: "pdf", build: func() []byte {
			return append([]byte("%PDF-1.4\n"), append(bytes.Repeat([]byte{0xff, 0x00, 'x'}, 3000), "\n%%EOF\n"...)...)
		}, Want: []string{"malformed"}},
		{Name: "length claims 1 TB", Type: "pdf", build: LengthLiePDF, Want: []string{"", "malformed"}},
		{Name: "circular prev", Type: "pdf", build: CircularPrevPDF, Want: []string{"", "malformed"}},
		{Name: "circular outline", Type: "pdf", build: CircularOutlinePDF, Want: []string{""}},
		{Name: "xref stream W 0 0 0, Index 0 1e9", Type: "pdf", build: XRefIndexBombPDF, Want: []string{"malformed", "too_large"}},
		{Name: "flate 14 MB to 2 GiB", Type: "pdf", build: func() []byte { return FlateBombPDF(2 << 30) }, Want: []string{"", "malformed", "too_large", "timeout"}},
		{Name: "encrypted", Type: "pdf", build: func() []byte { return PDF{Encrypt: true, Pages: ProsePDF(1).Pages}.Bytes() }, Want: []string{"encrypted"}},
		{Name: "active content", Type: "pdf", build: func() []byte { return ActivePDF().Bytes() }, Want: []string{""}, Active: true},
		// Titles: PDFium hands a title over whole, built in its own memory (about ten times the
		// string) and copied out. In process the engine's cap bounds it (PDFium gives up on
		// the title); in the sandbox the child's limits do (too_large). A loaded machine under
		// -race may pass a short deadline.
		{Name: "title 30 MB", Type: "pdf", build: func() []byte { return LongTitlePDF(30 << 20) }, Want: titleWant},
		{Name: "title 8 MB", Type: "pdf", build: func() []byte { return LongTitlePDF(8<<20 - 64) }, Want: titleWant},
		// The title inside a compressed object stream, where the file's bytes do not show it.
		{Name: "title 30 MB in an object stream", Type: "pdf", build: func() []byte { return ObjStmTitlePDF(30 << 20) }, Want: titleWant},
		{Name: "title 1 GiB in an object stream", Type: "pdf", build: func() []byte { return ObjStmTitlePDF(1 << 30) }, Want: titleWant},
		// A title that is a stream, which PDFium reads as its decoded data, whole; the
		// reference to it in the file's bytes or in an object stream.
		{Name: "title a 1 GiB stream", Type: "pdf", build: func() []byte { return StreamTitlePDF(1<<30, false) }, Want: titleWant},
		{Name: "title a 1 GiB stream, from an object stream", Type: "pdf", build: func() []byte {
			return ObjStmPDF{Info: "<< /Title 8 0 R >>", Stream: 1 << 30}.Bytes()
		}, Want: titleWant},
	}
}

// titleWant is what a title bomb may end as: parsed (the title read and cut, or given up on),
// stopped for its memory in a sandbox, or at its deadline.
var titleWant = []string{"", "too_large", "timeout"}

// LengthLiePDF returns a PDF whose content stream claims a /Length of 1 TB.
func LengthLiePDF() []byte {
	w := &pdfWriter{}
	w.buf.WriteString("%PDF-1.7\n")
	w.object("<< /Type /Catalog /Pages 2 0 R >>")
	w.object("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	w.object("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>")
	w.streamLength("", []byte("BT /F1 12 Tf 72 720 Td (Length lies) Tj ET"), "1099511627776")
	w.object("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	w.finish("/Size 6 /Root 1 0 R")
	return w.buf.Bytes()
}

// CircularPrevPDF returns a PDF with two cross-reference sections whose /Prev point at each other.
func CircularPrevPDF() []byte {
	w := &pdfWriter{}
	w.buf.WriteString("%PDF-1.7\n")
	w.object("<< /Type /Catalog /Pages 2 0 R >>")
	w.object("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	w.object("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>")
	w.stream("", []byte("BT /F1 12 Tf 72 720 Td (Circular prev) Tj ET"))
	w.object("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	table := func(prev int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(w.offsets)+1)
		for _, off := range w.offsets {
			fmt.Fprintf(&b, "%010d 00000 n \n", off)
		}
		fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R /Prev %010d >>\n", len(w.offsets)+1, prev)
		return b.String()
	}
	a := w.buf.Len()
	b := a + len(table(0))
	w.buf.WriteString(table(b))
	w.buf.WriteString(table(a))
	fmt.Fprintf(&w.buf, "startxref\n%d\n%%%%EOF\n", b)
	return w.buf.Bytes()
}

// CircularOutlinePDF returns a PDF whose outline items link to each other in a loop.
func CircularOutlinePDF() []byte {
	p := ProsePDF(1)
	a, b := p.ExtraRef(1), p.ExtraRef(2)
	p.Extra = []string{
		fmt.Sprintf("<< /Type /Outlines /First %d 0 R /Last %d 0 R /Count 2 >>", a, b),
		fmt.Sprintf("<< /Title (A) /Parent %d 0 R /Next %d 0 R /Prev %d 0 R /First %d 0 R >>", p.ExtraRef(0), b, b, b),
		fmt.Sprintf("<< /Title (B) /Parent %d 0 R /Next %d 0 R /Prev %d 0 R /First %d 0 R >>", p.ExtraRef(0), a, a, a),
	}
	p.Catalog = fmt.Sprintf("/Outlines %d 0 R", p.ExtraRef(0))
	return p.Bytes()
}

// XRefIndexBombPDF returns a PDF whose only cross-reference stream has /W [0 0 0] and claims a
// billion entries through /Index.
func XRefIndexBombPDF() []byte {
	w := &pdfWriter{}
	w.buf.WriteString("%PDF-1.7\n")
	w.object("<< /Type /Catalog /Pages 2 0 R >>")
	w.object("<< /Type /Pages /Kids [] /Count 0 >>")
	start := w.buf.Len()
	w.stream("/Type /XRef /Size 1000000000 /W [0 0 0] /Index [0 1000000000] /Root 1 0 R", nil)
	fmt.Fprintf(&w.buf, "startxref\n%d\n%%%%EOF\n", start)
	return w.buf.Bytes()
}

// LongTitlePDF returns a one-page PDF whose /Title is a literal string of n bytes.
func LongTitlePDF(n int) []byte { return LongInfoPDF("Title", n) }

// LongInfoPDF returns a one-page PDF whose document information entry key is a literal string
// of n bytes.
func LongInfoPDF(key string, n int) []byte {
	w := &pdfWriter{}
	w.buf.WriteString("%PDF-1.7\n")
	w.object("<< /Type /Catalog /Pages 2 0 R >>")
	w.object("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	w.object("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>")
	w.stream("", []byte("BT /F1 12 Tf 72 720 Td (A long title) Tj ET"))
	w.object("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	w.object("<< /" + key + " (" + strings.Repeat("T", n) + ") >>")
	w.finish("/Size 7 /Root 1 0 R /Info 6 0 R")
	return w.buf.Bytes()
}

// StreamTitlePDF returns a one-page PDF whose /Title refers to a FlateDecode stream that
// inflates to n 'T's, through an object that refers on to it when viaRef is set. PDFium reads
// a stream named as a string as its decoded data, whole.
func StreamTitlePDF(n int64, viaRef bool) []byte {
	return titleRefPDF(func(w *pdfWriter) {
		if viaRef {
			w.object("8 0 R")
		}
		w.stream("/Filter /FlateDecode", ZlibRepeat('T', n))
	})
}

// TitleRefPDF returns a one-page PDF whose /Title refers to object 7, of the given body.
func TitleRefPDF(body string) []byte {
	return titleRefPDF(func(w *pdfWriter) { w.object(body) })
}

// titleRefPDF writes a one-page PDF whose information dictionary, object 6, is
// "<< /Title 7 0 R >>", and whose objects from 7 on are what objects writes.
func titleRefPDF(objects func(w *pdfWriter)) []byte {
	w := &pdfWriter{}
	w.buf.WriteString("%PDF-1.7\n")
	w.object("<< /Type /Catalog /Pages 2 0 R >>")
	w.object("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	w.object("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>")
	w.stream("", []byte("BT /F1 12 Tf 72 720 Td (A title stream) Tj ET"))
	w.object("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	w.object("<< /Title 7 0 R >>")
	objects(w)
	w.finish(fmt.Sprintf("/Size %d /Root 1 0 R /Info 6 0 R", len(w.offsets)+1))
	return w.buf.Bytes()
}

// FlateBombPDF returns a PDF whose page content is a FlateDecode stream inflating to n spaces.
func FlateBombPDF(n int64) []byte {
	w := &pdfWriter{}
	w.buf.WriteString("%PDF-1.7\n")
	w.object("<< /Type /Catalog /Pages 2 0 R >>")
	w.object("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	w.object("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>")
	w.stream("/Filter /FlateDecode", ZlibRepeat(' ', n))
	w.finish("/Size 5 /Root 1 0 R")
	return w.buf.Bytes()
}

// row is a case of the table whose data is built only when asked for: some take seconds.
type row struct {
	Name   string
	Type   string
	Want   []string
	Active bool
	build  func() []byte
}

func (r row) name() string { return r.Type + "/" + r.Name }

func (r row) built() Case {
	return Case{Name: r.Name, Type: r.Type, Data: r.build(), Want: r.Want, Active: r.Active}
}

func builtAll(rows []row) []Case {
	cases := make([]Case, len(rows))
	for i, r := range rows {
		cases[i] = r.built()
	}
	return cases
}

// PDFCases returns the PDF rows of the bomb table.
func PDFCases() []Case { return builtAll(pdfRows()) }

// DOCXCases returns the ZIP and XML rows of the bomb table.
func DOCXCases() []Case { return builtAll(docxRows()) }

// Names returns the names of every case of the table, as "type/name" (PDFs, then DOCX files),
// building none.
func Names() []string {
	var names []string
	for _, r := range append(pdfRows(), docxRows()...) {
		names = append(names, r.name())
	}
	return names
}

// Named builds and returns the case named "type/name".
func Named(name string) (Case, bool) {
	for _, r := range append(pdfRows(), docxRows()...) {
		if r.name() == name {
			return r.built(), true
		}
	}
	return Case{}, false
}
