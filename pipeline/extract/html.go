package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/transform"
)

// htmlBlocks are the elements whose start and end break a paragraph.
var htmlBlocks = map[string]bool{
	"address": true, "article": true, "aside": true, "blockquote": true, "dd": true, "details": true,
	"dialog": true, "div": true, "dl": true, "dt": true, "fieldset": true, "figcaption": true,
	"figure": true, "footer": true, "form": true, "h1": true, "h2": true, "h3": true, "h4": true,
	"h5": true, "h6": true, "header": true, "hr": true, "main": true, "nav": true, "ol": true,
	"p": true, "pre": true, "section": true, "summary": true, "table": true, "ul": true,
	"caption": true, "body": true, "html": true,
}

// htmlSkipped are the elements whose content is not text for a reader.
var htmlSkipped = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true,
	"svg": true, "math": true, "iframe": true, "object": true, "noembed": true, "noframes": true,
}

// htmlState is the walk over an HTML token stream.
type htmlState struct {
	text     strings.Builder
	title    strings.Builder
	heading  strings.Builder
	skip     int    // depth inside skipped elements
	inTitle  bool   // inside the first <title>
	titled   bool   // a <title> was seen
	inH1     bool   // inside the first <h1>
	h1Done   bool   // the first <h1> ended
	cell     int    // cells seen in the current table row
	pre      int    // depth inside <pre>, where line breaks are content
	skipName string // the skipped element being counted
}

// extractHTML extracts the visible text of an HTML document: script, style, noscript, template
// and embedded SVG/MathML are skipped, block elements break paragraphs, table cells are joined
// with " | ". The title is <title>, else the first <h1>. Legacy encodings are decoded by their
// meta charset (default UTF-8).
func extractHTML(ctx context.Context, data []byte, opts *Options) (*Document, error) {
	var src io.Reader = bytes.NewReader(data)
	if enc, name, _ := charset.DetermineEncoding(data[:min(len(data), 1024)], "text/html"); name != "utf-8" {
		src = transform.NewReader(src, enc.NewDecoder())
	}
	z := html.NewTokenizer(src)
	st := &htmlState{}
	for n := 0; ; n++ {
		if n%4096 == 0 {
			if err := deadlineErr(ctx, "html"); err != nil {
				return nil, err
			}
		}
		tt := z.Next()
		if tt == html.ErrorToken {
			if errors.Is(z.Err(), io.EOF) {
				break
			}
			return nil, fmt.Errorf("html: %w: %w", z.Err(), ErrMalformed)
		}
		st.token(z, tt)
		if st.text.Len() > opts.MaxTextLength {
			return nil, fmt.Errorf("html: text > cap %d: %w", opts.MaxTextLength, ErrTooLarge)
		}
	}
	title := capTitle(st.title.String())
	if title == "" {
		title = capTitle(st.heading.String())
	}
	return &Document{Pages: pagesFrom([]string{st.text.String()}), Title: title}, nil
}

// token applies one token to the walk.
func (st *htmlState) token(z *html.Tokenizer, tt html.TokenType) {
	switch tt {
	case html.StartTagToken, html.SelfClosingTagToken:
		name, _ := z.TagName()
		st.start(string(name), tt == html.SelfClosingTagToken)
	case html.EndTagToken:
		name, _ := z.TagName()
		st.end(string(name))
	case html.TextToken:
		if st.skip > 0 {
			return
		}
		t := z.Text()
		if st.pre == 0 {
			t = collapseHTMLSpace(t)
		}
		switch {
		case st.inTitle:
			capWrite(&st.title, t)
		default:
			if st.inH1 {
				capWrite(&st.heading, t)
			}
			st.text.Write(t)
		}
	}
}

func (st *htmlState) start(name string, selfClosing bool) {
	if st.skip > 0 {
		if name == st.skipName && !selfClosing {
			st.skip++
		}
		return
	}
	switch {
	case htmlSkipped[name]:
		if !selfClosing {
			st.skip, st.skipName = 1, name
		}
	case name == "title":
		st.inTitle = !st.titled && !selfClosing
		st.titled = true
	case name == "h1":
		st.inH1 = !st.h1Done
		st.text.WriteString("\n\n")
	case name == "br":
		st.text.WriteByte('\n')
	case name == "pre":
		st.pre++
		st.text.WriteString("\n\n")
	case name == "li" || name == "tr":
		st.text.WriteByte('\n')
		st.cell = 0
	case name == "td" || name == "th":
		if st.cell > 0 {
			st.text.WriteString(" | ")
		}
		st.cell++
	case htmlBlocks[name]:
		st.text.WriteString("\n\n")
	}
}

func (st *htmlState) end(name string) {
	if st.skip > 0 {
		if name == st.skipName {
			st.skip--
		}
		return
	}
	switch {
	case name == "title":
		st.inTitle = false
	case name == "pre":
		st.pre = max(st.pre-1, 0)
		st.text.WriteString("\n\n")
	case name == "h1":
		st.inH1, st.h1Done = false, st.inH1 || st.h1Done
		st.text.WriteString("\n\n")
	case htmlBlocks[name]:
		st.text.WriteString("\n\n")
	}
}

// collapseHTMLSpace replaces each run of HTML white space (space, tab, line feed, form feed,
// carriage return) in t, in place, by one space: outside <pre>, source line breaks are not text.
func collapseHTMLSpace(t []byte) []byte {
	out := t[:0]
	space := false
	for _, c := range t {
		if c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' {
			space = true
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, c)
	}
	if space {
		out = append(out, ' ')
	}
	return out
}
