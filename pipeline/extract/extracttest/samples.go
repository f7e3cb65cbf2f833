package extracttest

import (
	"fmt"
	"strings"
)

// Lines lays out one text item per line from (x, y) downwards, leading points apart.
func Lines(x, y, leading float64, lines ...string) []PDFText {
	out := make([]PDFText, len(lines))
	for i, l := range lines {
		out[i] = PDFText{X: x, Y: y - float64(i)*leading, Text: l}
	}
	return out
}

// ProsePDF returns a PDF of n pages, each a heading and a few paragraphs of distinct text
// ("Page 3 of 10 ..."): the benchmark and end-to-end input.
func ProsePDF(n int) PDF {
	p := PDF{Title: fmt.Sprintf("Prose, %d pages", n)}
	for i := 1; i <= n; i++ {
		items := []PDFText{{X: 72, Y: 740, Size: 18, Font: "Helvetica-Bold", Text: fmt.Sprintf("Section %d", i)}}
		y := 710.0
		for para := 1; para <= 4; para++ {
			for line := 1; line <= 8; line++ {
				items = append(items, PDFText{X: 72, Y: y, Size: 11, Font: "Times-Roman",
					Text: fmt.Sprintf("Page %d of %d, paragraph %d, line %d: the quick brown fox jumps over the lazy dog.", i, n, para, line)})
				y -= 14
			}
			y -= 10
		}
		p.Pages = append(p.Pages, PDFPage{Text: items})
	}
	return p
}

// UnicodePDF returns a one-page PDF of WinAnsi's non-ASCII repertoire, a hyphenated line break
// and a run of spaces.
func UnicodePDF() PDF {
	return PDF{Title: "Unicode — café ﬁle", Pages: []PDFPage{{Text: Lines(72, 720, 16,
		"Café crème brûlée, naïve façade, Ærøskøbing, Straße.",
		"Prices: €12, £9, ¥300; 50% off — “quoted” and ‘single’…",
		"Signs: © ® ™ § ¶ ± × ÷ µ ° ½ ¼ ¾ • † ‡",
		"This sentence has an exam-",
		"ple of hyphenation and    extra     spaces.",
	)}}}
}

// TwoColumnsPDF returns a page of two text columns, whose lines sit side by side.
func TwoColumnsPDF() PDF {
	left := Lines(72, 720, 14,
		"Left column first line,",
		"left column second line,",
		"left column third line.")
	right := Lines(320, 720, 14,
		"Right column first line,",
		"right column second line,",
		"right column third line.")
	return PDF{Title: "Two columns", Pages: []PDFPage{{Text: append(left, right...)}}}
}

// TablePDF returns a page with a ruled table: a header row and three data rows.
func TablePDF() PDF {
	rows := [][]string{{"Item", "Qty", "Price"}, {"Apples", "3", "1.20"}, {"Pears", "12", "0.80"}, {"Plums", "7", "2.05"}}
	var items []PDFText
	var rules strings.Builder
	for r, row := range rows {
		y := 700 - float64(r)*20
		for c, cell := range row {
			items = append(items, PDFText{X: 80 + float64(c)*120, Y: y, Font: "Courier", Text: cell})
		}
		fmt.Fprintf(&rules, "72 %g m 440 %g l S\n", y-6, y-6)
	}
	return PDF{Title: "Table", Pages: []PDFPage{{Text: items, Content: rules.String()}}}
}

// NoTextPDF returns a two-page PDF whose pages hold only vector drawings: nothing to extract.
func NoTextPDF() PDF {
	draw := "0.5 g 72 72 468 648 re f 1 0 0 RG 4 w 72 72 m 540 720 l S\n"
	return PDF{Pages: []PDFPage{{Content: draw}, {Content: draw}}}
}

// MixedPDF returns three pages: text, no text, text.
func MixedPDF() PDF {
	return PDF{Title: "Mixed", Pages: []PDFPage{
		{Text: Lines(72, 720, 14, "First page has text.")},
		{Content: "72 72 468 648 re S\n"},
		{Text: Lines(72, 720, 14, "Third page has text.")},
	}}
}

// ActivePDF returns a PDF with every kind of active content: an OpenAction running JavaScript, a
// Launch action on a link, and an embedded file.
func ActivePDF() PDF {
	p := PDF{Title: "Active", Pages: []PDFPage{{Text: Lines(72, 720, 14, "Nothing to see here.")}}}
	p.Extra = []string{
		"<< /S /JavaScript /JS (app.alert\\(1\\);) >>",
		"<< /Type /Annot /Subtype /Link /Rect [0 0 10 10] /A << /S /Launch /F (calc.exe) >> >>",
		"<< /Type /Filespec /F (a.txt) /EF << /F " + fmt.Sprint(p.ExtraRef(3)) + " 0 R >> >>",
		"<< /Type /EmbeddedFile /Length 5 >>\nstream\nhello\nendstream",
	}
	p.Catalog = fmt.Sprintf("/OpenAction %d 0 R /Names << /EmbeddedFiles << /Names [(a.txt) %d 0 R] >> >>",
		p.ExtraRef(0), p.ExtraRef(2))
	return p
}

// SlowPDF returns a one-page PDF whose content stream takes PDFium seconds to lay out (hundreds of
// thousands of text objects): the input for deadline tests.
func SlowPDF() PDF {
	return PDF{Pages: []PDFPage{{Content: strings.Repeat("BT /F1 1 Tf 1 1 Td (abcdefgh) Tj ET\n", 300_000)}}}
}
