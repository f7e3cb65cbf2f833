package extracttest

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// ObjStmPDF describes a one-page PDF 1.5 whose document information dictionary (object 6) and
// Extra objects (8, 9, …) live in one FlateDecode object stream (object 7), found through a
// cross-reference stream, as most writers lay out PDFs today. The stream is built from
// Stretches, so a title of gigabytes costs kilobytes.
type ObjStmPDF struct {
	// Info is the information dictionary's body; each "%FILL%" in it stands for Fill copies of
	// FillByte (default 'T').
	Info string
	// Extra holds bodies of further objects in the stream; Extra[i] is object 8+i.
	Extra []string
	// Fill and FillByte expand "%FILL%" in Info and Extra.
	Fill     int64
	FillByte byte
	// Pad puts this many spaces before the first object in the stream's data.
	Pad int64
	// Hostile or broken variants: N and First replace the dictionary's values when not zero,
	// Shift is added to every offset of the stream's table, Filter replaces /FlateDecode
	// (the data stays zlib), and Cut keeps only that many bytes of the compressed data.
	N, First, Shift, Cut int
	Filter               string
	// Stream, when not zero, adds a plain FlateDecode stream object after the Extra objects
	// (number StreamRef) that inflates to Stream copies of FillByte.
	Stream int64
}

// StreamRef returns the number of the stream object that Stream adds.
func (p ObjStmPDF) StreamRef() int { return 8 + len(p.Extra) }

// Bytes renders the PDF.
func (p ObjStmPDF) Bytes() []byte {
	w := &pdfWriter{}
	w.buf.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	w.object("<< /Type /Catalog /Pages 2 0 R >>")
	w.object("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	w.object("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>")
	w.stream("", []byte("BT /F1 12 Tf 72 720 Td (Object streams) Tj ET"))
	w.object("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	w.offsets = append(w.offsets, 0) // object 6 lives in the object stream
	data, n, first := p.streamData()
	if p.N != 0 {
		n = p.N
	}
	if p.First != 0 {
		first = p.First
	}
	if p.Cut > 0 && p.Cut < len(data) {
		data = data[:p.Cut]
	}
	filter := "/FlateDecode"
	if p.Filter != "" {
		filter = p.Filter
	}
	w.stream(fmt.Sprintf("/Type /ObjStm /N %d /First %d /Filter %s", n, first, filter), data)
	for range p.Extra {
		w.offsets = append(w.offsets, 0)
	}
	if p.Stream > 0 {
		w.stream("/Filter /FlateDecode", ZlibRepeat(p.fill(), p.Stream))
	}
	// The cross-reference stream: /W [1 4 2], one entry per object, itself included.
	size := len(w.offsets) + 2
	var xref []byte
	entry := func(typ byte, f2 uint32, f3 uint16) {
		xref = append(xref, typ)
		xref = binary.BigEndian.AppendUint32(xref, f2)
		xref = binary.BigEndian.AppendUint16(xref, f3)
	}
	entry(0, 0, 65535)
	for i, off := range w.offsets {
		switch num := i + 1; {
		case num == 6:
			entry(2, 7, 0)
		case num > 7 && num < p.StreamRef():
			entry(2, 7, uint16(num-7))
		default:
			entry(1, uint32(off), 0)
		}
	}
	start := w.buf.Len()
	entry(1, uint32(start), 0)
	w.stream(fmt.Sprintf("/Type /XRef /Size %d /W [1 4 2] /Root 1 0 R /Info 6 0 R", size), xref)
	fmt.Fprintf(&w.buf, "startxref\n%d\n%%%%EOF\n", start)
	return w.buf.Bytes()
}

// streamData returns the object stream's compressed data, its object count and /First.
func (p ObjStmPDF) streamData() (data []byte, n, first int) {
	fill := p.fill()
	objs := append([]string{p.Info}, p.Extra...)
	var body []Stretch
	var header strings.Builder
	off := p.Pad
	if p.Pad > 0 {
		body = append(body, Stretch{Fill: ' ', N: p.Pad})
	}
	for i, obj := range objs {
		num := 6
		if i > 0 {
			num = 7 + i
		}
		fmt.Fprintf(&header, "%d %d ", num, off+int64(p.Shift))
		parts := strings.Split(obj+"\n", "%FILL%")
		for j, part := range parts {
			s := Stretch{Text: part}
			if j < len(parts)-1 {
				s.Fill, s.N = fill, p.Fill
			}
			body = append(body, s)
			off += int64(len(s.Text)) + s.N
		}
	}
	header.WriteString("\n")
	return ZlibStretches(append([]Stretch{{Text: header.String()}}, body...)), len(objs), header.Len()
}

func (p ObjStmPDF) fill() byte {
	if p.FillByte == 0 {
		return 'T'
	}
	return p.FillByte
}

// ObjStmTitlePDF returns an ObjStmPDF whose /Title, in the object stream, is a literal string
// of n 'T's.
func ObjStmTitlePDF(n int64) []byte {
	return ObjStmPDF{Info: "<< /Title (%FILL%) /Producer (docket extracttest) >>", Fill: n}.Bytes()
}

// PlainInfoPDF returns the one-page PDF of ObjStmPDF with info as its information dictionary,
// written as a plain object: the same document without object streams.
func PlainInfoPDF(info string) []byte {
	w := &pdfWriter{}
	w.buf.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	w.object("<< /Type /Catalog /Pages 2 0 R >>")
	w.object("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	w.object("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>")
	w.stream("", []byte("BT /F1 12 Tf 72 720 Td (Object streams) Tj ET"))
	w.object("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	w.object(info)
	w.finish("/Size 7 /Root 1 0 R /Info 6 0 R")
	return w.buf.Bytes()
}
