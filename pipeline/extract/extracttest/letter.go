package extracttest

import "strings"

// letterParagraphs are the prose of LetterPDF: ordinary sentences, no line like the next.
var letterParagraphs = []struct {
	font string
	size float64
	text string
}{
	{"Times-Roman", 11, "Thank you for your letter of the twelfth, which reached our office on Monday morning. " +
		"We have reviewed the invoices you enclosed and found that two of them were paid twice in " +
		"October, once by bank transfer and once by cheque. The second payment will be returned to " +
		"your account within ten working days, together with a short statement of the corrections."},
	{"Times-Roman", 11, "Our auditors asked us to keep the original documents for seven years. Please send " +
		"any further receipts as scanned copies rather than photographs taken with a phone, because " +
		"the shadows and the curved pages make them hard to read. A flat scan at three hundred dots " +
		"per inch is enough for every purpose we know of, including the tax authority's archive."},
	{"Helvetica", 10, "Shipping schedule: the warehouse in Rotterdam closes for inventory from the third to " +
		"the seventh of January. Orders placed during that week will leave on the eighth, in the " +
		"order they were received. Customers with urgent needs may collect their goods in person."},
	{"Courier", 10, "Reference: ACC-2291, contract renewal, second quarter. Contact: accounts department, " +
		"extension 4417, weekdays from nine to five."},
	{"Times-Roman", 11, "The committee met again in the spring to discuss the budget for the new library wing. " +
		"Several members argued that the reading rooms should stay open later in the evening, since " +
		"most students work during the day. Others worried about the cost of heating and of the extra " +
		"staff. In the end a compromise was reached: the rooms will open until ten at night on three " +
		"days of the week, and the arrangement will be reviewed after one year."},
	{"Times-Roman", 11, "Finally, we would like to remind you that the annual meeting of members takes place " +
		"on the last Friday of March. Coffee will be served from half past eight, and the meeting " +
		"itself begins at nine. We look forward to seeing you there, and we thank you once more for " +
		"your patience while these matters were being settled."},
	{"Helvetica-Bold", 12, "With kind regards, the Secretary"},
}

// LetterPDF returns a two-page letter of varied prose in four fonts, set the way a word
// processor sets it (wrapped lines, paragraph gaps): the text a scan of which OCR reads back.
func LetterPDF() PDF {
	p := PDF{Title: "Letter"}
	var items []PDFText
	y := 720.0
	for i, para := range letterParagraphs {
		width := int(468 / (para.size * 0.5)) // characters per line, about
		if para.font == "Courier" {
			width = int(468 / (para.size * 0.6))
		}
		for _, line := range wrap(para.text, width) {
			items = append(items, PDFText{X: 72, Y: y, Size: para.size, Font: para.font, Text: line})
			y -= para.size * 1.4
		}
		y -= 12
		if i == 3 { // the second half on page two
			p.Pages = append(p.Pages, PDFPage{Text: items})
			items, y = nil, 720
		}
	}
	p.Pages = append(p.Pages, PDFPage{Text: items})
	return p
}

// wrap breaks text into lines of at most width characters, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	var line strings.Builder
	for _, w := range strings.Fields(text) {
		if line.Len() > 0 && line.Len()+1+len(w) > width {
			lines = append(lines, line.String())
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(w)
	}
	if line.Len() > 0 {
		lines = append(lines, line.String())
	}
	return lines
}
