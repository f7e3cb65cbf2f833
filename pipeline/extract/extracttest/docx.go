package extracttest

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"strings"
)

// WordNS is the WordprocessingML main namespace.
const WordNS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"

// DOCX describes a Word document to generate with Bytes.
type DOCX struct {
	// Title goes to docProps/core.xml as dc:title; empty writes no core part.
	Title string
	// Body is the inner XML of <w:body>: build it with Para, Heading, PageBreak, Table.
	Body string
	// Document, when set, replaces word/document.xml whole (for hostile XML).
	Document []byte
	// Files holds extra entries by name.
	Files map[string][]byte
}

// Bytes zips the document with archive/zip (deflate), in a fixed entry order.
func (d DOCX) Bytes() []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, data []byte) {
		w, err := zw.Create(name)
		if err == nil {
			_, _ = w.Write(data)
		}
	}
	add("[Content_Types].xml", []byte(contentTypes))
	add("_rels/.rels", []byte(rels))
	doc := d.Document
	if doc == nil {
		doc = []byte(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" +
			`<w:document xmlns:w="` + WordNS + `"><w:body>` + d.Body + `</w:body></w:document>`)
	}
	add("word/document.xml", doc)
	if d.Title != "" {
		add("docProps/core.xml", []byte(`<?xml version="1.0" encoding="UTF-8"?>`+
			`<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" `+
			`xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>`+esc(d.Title)+`</dc:title></cp:coreProperties>`))
	}
	for _, name := range sortedKeys(d.Files) {
		add(name, d.Files[name])
	}
	_ = zw.Close()
	return buf.Bytes()
}

const contentTypes = `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
	`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
	`<Default Extension="xml" ContentType="application/xml"/>` +
	`<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`

const rels = `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
	`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`

// esc escapes s for XML character data.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// Run returns a run of text (w:r with w:t, spaces preserved).
func Run(text string) string {
	return `<w:r><w:t xml:space="preserve">` + esc(text) + `</w:t></w:r>`
}

// Para returns a paragraph of runs, one per text.
func Para(texts ...string) string {
	var b strings.Builder
	b.WriteString("<w:p>")
	for _, t := range texts {
		b.WriteString(Run(t))
	}
	b.WriteString("</w:p>")
	return b.String()
}

// Heading returns a paragraph in the given style ("Title", "Heading1", "Heading2"...).
func Heading(style, text string) string {
	return `<w:p><w:pPr><w:pStyle w:val="` + esc(style) + `"/></w:pPr>` + Run(text) + `</w:p>`
}

// PageBreak returns a paragraph holding an explicit page break.
func PageBreak() string { return `<w:p><w:r><w:br w:type="page"/></w:r></w:p>` }

// RenderedBreak returns a paragraph that Word rendered at the top of a new page.
func RenderedBreak(text string) string {
	return `<w:p><w:r><w:lastRenderedPageBreak/><w:t>` + esc(text) + `</w:t></w:r></w:p>`
}

// Table returns a table with one paragraph per cell.
func Table(rows [][]string) string {
	var b strings.Builder
	b.WriteString("<w:tbl>")
	for _, row := range rows {
		b.WriteString("<w:tr>")
		for _, cell := range row {
			b.WriteString("<w:tc>" + Para(cell) + "</w:tc>")
		}
		b.WriteString("</w:tr>")
	}
	b.WriteString("</w:tbl>")
	return b.String()
}
