package extract

import (
	"archive/zip"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// docxCorePart holds the document's metadata (dc:title).
const docxCorePart = "docProps/core.xml"

// extractDOCX extracts the text of word/document.xml: paragraphs, table cells joined by " | ",
// pages split at explicit page breaks and at Word's last-rendered page breaks. The title is
// docProps/core.xml's dc:title, else the first Title or Heading 1 paragraph.
func extractDOCX(ctx context.Context, r io.ReaderAt, size int64, opts *Options) (*Document, error) {
	zr, main, err := inspectDOCX(r, size, opts.DOCX)
	if err != nil {
		return nil, err
	}
	w := &docxWalker{maxPages: opts.MaxPages, maxText: opts.MaxTextLength}
	if err := walkPart(ctx, main, opts.DOCX, w.token); err != nil {
		return nil, err
	}
	doc := &Document{Pages: pagesFrom(w.finish()), Title: Normalize(w.title)}
	if t := coreTitle(ctx, zr, opts.DOCX); t != "" {
		doc.Title = t
	}
	return doc, nil
}

// walkPart streams one XML part through fn with the part's caps: at most MaxEntrySize bytes
// really inflated, at most MaxXMLDepth levels of elements, no DOCTYPE (so no entities).
func walkPart(ctx context.Context, f *zip.File, lim DOCXLimits, fn func(xml.Token) error) error {
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("docx: open %s: %w: %w", f.Name, err, ErrMalformed)
	}
	defer rc.Close()
	d := xml.NewDecoder(&capReader{r: rc, left: lim.MaxEntrySize})
	depth := 0
	for n := 0; ; n++ {
		if n%4096 == 0 {
			if err := deadlineErr(ctx, "docx"); err != nil {
				return err
			}
		}
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			if depth != 0 {
				return fmt.Errorf("docx: %s: unclosed elements: %w", f.Name, ErrMalformed)
			}
			return nil
		}
		if err != nil {
			return xmlErr(f.Name, err)
		}
		switch tok.(type) {
		case xml.Directive:
			return fmt.Errorf("docx: %s: DOCTYPE or other directive: %w", f.Name, ErrMalformed)
		case xml.StartElement:
			if depth++; depth > lim.MaxXMLDepth {
				return fmt.Errorf("docx: %s: elements nested over %d deep: %w", f.Name, lim.MaxXMLDepth, ErrMalformed)
			}
		case xml.EndElement:
			depth--
		}
		if err := fn(tok); err != nil {
			return err
		}
	}
}

// xmlErr classifies a decoder error: a cap hit stays ErrTooLarge, anything else is malformed.
func xmlErr(name string, err error) error {
	if errors.Is(err, ErrTooLarge) {
		return fmt.Errorf("docx: %s: %w", name, err)
	}
	return fmt.Errorf("docx: %s: %w: %w", name, err, ErrMalformed)
}

// capReader fails with ErrTooLarge once more than left bytes were read, whatever the archive claims.
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	if c.left -= int64(n); c.left < 0 {
		return 0, fmt.Errorf("inflated past cap: %w", ErrTooLarge)
	}
	return n, err
}

// coreTitle returns docProps/core.xml's title, or "" when there is none or it is unreadable.
func coreTitle(ctx context.Context, zr *zip.Reader, lim DOCXLimits) string {
	var f *zip.File
	for _, e := range zr.File {
		if e.Name == docxCorePart {
			f = e
		}
	}
	if f == nil {
		return ""
	}
	lim.MaxEntrySize = min(lim.MaxEntrySize, 1<<20)
	var title strings.Builder
	in := false
	err := walkPart(ctx, f, lim, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			in = t.Name.Local == "title"
		case xml.EndElement:
			in = false
		case xml.CharData:
			if in && title.Len() < 4096 {
				title.Write(t)
			}
		}
		return nil
	})
	if err != nil {
		return ""
	}
	return Normalize(title.String())
}

// docxWalker accumulates pages from document.xml's tokens, by local name.
type docxWalker struct {
	pages     []string
	cur       strings.Builder
	total     int
	maxPages  int
	maxText   int
	inText    bool   // inside <w:t>
	skip      int    // depth inside content not to read (mc:Fallback duplicates mc:Choice)
	table     int    // table nesting depth
	cell      int    // cells so far in the current row
	paraStart int    // offset in cur where the current paragraph began
	paraStyle string // the current paragraph's style id
	title     string // the first Title or Heading 1 paragraph
}

func (w *docxWalker) token(tok xml.Token) error {
	switch t := tok.(type) {
	case xml.StartElement:
		return w.start(t)
	case xml.EndElement:
		w.end(t.Name.Local)
	case xml.CharData:
		if w.inText && w.skip == 0 {
			w.cur.Write(t)
		}
	}
	if w.total+w.cur.Len() > w.maxText {
		return fmt.Errorf("docx: text > cap %d: %w", w.maxText, ErrTooLarge)
	}
	return nil
}

func (w *docxWalker) start(t xml.StartElement) error {
	if w.skip > 0 || t.Name.Local == "Fallback" {
		w.skip++
		return nil
	}
	switch t.Name.Local {
	case "p":
		w.paraStart, w.paraStyle = w.cur.Len(), ""
	case "pStyle":
		w.paraStyle = attr(t, "val")
	case "t":
		w.inText = true
	case "tab":
		w.cur.WriteByte('\t')
	case "cr":
		w.cur.WriteByte('\n')
	case "noBreakHyphen":
		w.cur.WriteByte('-')
	case "br":
		if attr(t, "type") == "page" {
			return w.pageBreak()
		}
		w.cur.WriteByte('\n')
	case "lastRenderedPageBreak":
		return w.pageBreak()
	case "tbl":
		w.table++
		w.cur.WriteString("\n\n")
	case "tr":
		w.cell = 0
		w.cur.WriteByte('\n')
	case "tc":
		if w.cell > 0 {
			w.cur.WriteString(" | ")
		}
		w.cell++
	}
	return nil
}

func (w *docxWalker) end(local string) {
	if w.skip > 0 {
		w.skip--
		return
	}
	switch local {
	case "t":
		w.inText = false
	case "p":
		if w.table > 0 {
			w.cur.WriteByte(' ')
			return
		}
		if w.title == "" && isTitleStyle(w.paraStyle) && w.paraStart <= w.cur.Len() {
			w.title = w.cur.String()[w.paraStart:]
		}
		w.cur.WriteString("\n\n")
	case "tbl":
		w.table--
		w.cur.WriteString("\n\n")
	}
}

// pageBreak starts a new page unless the current one has no text yet (Word often writes an
// explicit break and a last-rendered break for the same page turn).
func (w *docxWalker) pageBreak() error {
	if strings.TrimSpace(w.cur.String()) == "" {
		return nil
	}
	w.total += w.cur.Len()
	w.pages = append(w.pages, w.cur.String())
	w.cur.Reset()
	w.paraStart = 0
	if len(w.pages) > w.maxPages {
		return fmt.Errorf("docx: over %d pages: %w", w.maxPages, ErrTooLarge)
	}
	return nil
}

func (w *docxWalker) finish() []string {
	if strings.TrimSpace(w.cur.String()) != "" || len(w.pages) == 0 {
		w.pages = append(w.pages, w.cur.String())
	}
	return w.pages
}

func isTitleStyle(id string) bool {
	id = strings.ToLower(strings.ReplaceAll(id, " ", ""))
	return id == "title" || id == "heading1"
}

// attr returns the value of the attribute with the given local name ("w:val" → "val").
func attr(t xml.StartElement, local string) string {
	for _, a := range t.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}
