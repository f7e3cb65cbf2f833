package extract

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// SniffLen is the most bytes Sniff reads and SniffBytes looks at.
const SniffLen = 512

// Sniff reads at most SniffLen bytes from r and returns the document type they show. The caller
// keeps the rest of the stream; to parse it, re-read from the start (Extract takes an
// io.ReaderAt). A read error other than io.EOF is returned as is.
func Sniff(r io.Reader) (Type, error) {
	var buf [SniffLen]byte
	n, err := io.ReadFull(r, buf[:])
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return TypeUnknown, fmt.Errorf("sniff: %w", err)
	}
	return SniffBytes(buf[:n])
}

// SniffBytes returns the type shown by head, the first bytes of a file (only the first SniffLen
// are looked at). Magic bytes decide: "%PDF-" at offset 0 is a PDF, a ZIP local header is a
// DOCX candidate (confirm with InspectDOCX), text that starts like HTML is HTML (even with
// "%PDF-" further in), other text is Markdown or plain text. Text is UTF-8, UTF-16 (with or
// without a byte-order mark) or Windows-1252 (and so Latin-1), as detectText tells; what has
// control bytes — images, archives, executables — is ErrBinary, and SVG and other XML are
// ErrUnsupported. Empty input is ErrEmpty. It allocates only to decode text that is not UTF-8.
func SniffBytes(head []byte) (Type, error) {
	if len(head) > SniffLen {
		head = head[:SniffLen]
	}
	switch {
	case len(head) == 0:
		return TypeUnknown, ErrEmpty
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return TypePDF, nil
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return TypeDOCX, nil
	}
	enc, ok := detectText(head, len(head) == SniffLen)
	if !ok {
		return TypeUnknown, ErrBinary
	}
	text := toUTF8(head, enc)
	trimmed := trimSpaceLeft(text)
	if len(trimmed) > 0 && trimmed[0] == '<' {
		return sniffMarkup(trimmed)
	}
	if looksMarkdown(text) {
		return TypeMarkdown, nil
	}
	return TypeText, nil
}

// ErrBinary: the input is not one of the binary formats accepted (PDF, DOCX) and not text in
// an encoding Docket reads. It wraps ErrUnsupported.
var ErrBinary = fmt.Errorf("%w: binary data, not text in UTF-8, UTF-16 or Windows-1252", ErrUnsupported)

func trimSpaceLeft(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r' || b[0] == '\f') {
		b = b[1:]
	}
	return b
}

// htmlPrefixes are the WHATWG MIME-sniffing signatures for HTML, lower case, each followed in
// the input by a tag-terminating byte (space or '>').
var htmlPrefixes = [...]string{
	"<!doctype html", "<html", "<head", "<script", "<iframe", "<h1", "<div", "<font", "<table",
	"<a", "<style", "<title", "<b", "<body", "<br", "<p", "<!--",
	"<meta", "<link", "<section", "<article", "<main", "<header", "<nav", "<ul", "<ol", "<h2",
	"<h3", "<span", "<pre", "<blockquote", "<form",
}

// sniffMarkup classifies text that starts with '<': HTML (also XHTML behind an XML declaration)
// is accepted; SVG and other XML is not; anything else is Markdown or text ("<3 ...").
func sniffMarkup(b []byte) (Type, error) {
	if hasPrefixFold(b, "<?xml") {
		if indexFold(b, "<svg") >= 0 || indexFold(b, "<html") < 0 {
			return TypeUnknown, ErrUnsupported
		}
		return TypeHTML, nil
	}
	if hasPrefixFold(b, "<svg") {
		return TypeUnknown, ErrUnsupported
	}
	for _, p := range htmlPrefixes {
		if hasPrefixFold(b, p) && len(b) > len(p) && isTagEnd(b[len(p)]) {
			if !documentTag(p) && markdownBlocks(b) {
				return TypeMarkdown, nil // a README that opens with an HTML block
			}
			return TypeHTML, nil
		}
	}
	if looksMarkdown(b) {
		return TypeMarkdown, nil
	}
	return TypeText, nil
}

// documentTag reports whether an HTML signature starts a whole document rather than a block.
func documentTag(p string) bool {
	return p == "<!doctype html" || p == "<html" || p == "<head" || p == "<body"
}

// markdownBlocks reports whether a line of b, outside <pre> blocks, is Markdown that HTML has no
// use for: an ATX heading, a code fence, or a line that opens with a Markdown image or badge
// ("![", "[!["). Markdown allows raw HTML blocks, so a README may open with one; an HTML
// fragment holds such lines only as preformatted text.
func markdownBlocks(b []byte) bool {
	inPre := false
	for line := range bytes.Lines(b) {
		line = bytes.TrimRight(line, " \t\r\n")
		switch {
		case indexFold(line, "<pre") >= 0:
			inPre = indexFold(line, "</pre>") < 0
			continue
		case inPre:
			inPre = indexFold(line, "</pre>") < 0
			continue
		}
		hashes := 0
		for hashes < len(line) && line[hashes] == '#' {
			hashes++
		}
		if hashes >= 1 && hashes <= 6 && len(line) > hashes && line[hashes] == ' ' ||
			bytes.HasPrefix(line, []byte("```")) || bytes.HasPrefix(line, []byte("~~~")) ||
			bytes.HasPrefix(line, []byte("![")) || bytes.HasPrefix(line, []byte("[![")) {
			return true
		}
	}
	return false
}

// markdownFragment reports whether data, sniffed as HTML from its first bytes, is Markdown that
// opens with an HTML block (as many READMEs do): it does not start a whole HTML document and,
// read whole, has Markdown blocks (markdownBlocks) the sniff window did not reach.
func markdownFragment(data []byte) bool {
	head := trimSpaceLeft(data)
	for _, p := range htmlPrefixes {
		if documentTag(p) && hasPrefixFold(head, p) {
			return false
		}
	}
	return markdownBlocks(data)
}

func isTagEnd(c byte) bool {
	return c == ' ' || c == '>' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '/'
}

func hasPrefixFold(b []byte, prefix string) bool {
	if len(b) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lower(b[i]) != prefix[i] {
			return false
		}
	}
	return true
}

func indexFold(b []byte, s string) int {
	for i := 0; i+len(s) <= len(b); i++ {
		if hasPrefixFold(b[i:], s) {
			return i
		}
	}
	return -1
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// looksMarkdown reports whether any line of b starts like Markdown: an ATX heading, a fenced
// code block, a setext underline, a block quote, a list item, or a [link](target).
func looksMarkdown(b []byte) bool {
	var prev []byte
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		line = bytes.TrimRight(line, " \t\r")
		if markdownLine(line) || setextUnderline(prev, line) {
			return true
		}
		prev = line
	}
	return false
}

// setextUnderline reports whether line underlines prev as a setext heading: a run of at least
// three '=' or '-' under a line of text. A line with "://" above is a URL set off by a rule in
// plain text, not a heading.
func setextUnderline(prev, line []byte) bool {
	return len(line) >= 3 && (allByte(line, '=') || allByte(line, '-')) &&
		len(bytes.TrimSpace(prev)) > 0 && !bytes.Contains(prev, []byte("://"))
}

func markdownLine(line []byte) bool {
	if len(line) == 0 {
		return false
	}
	hashes := 0
	for hashes < len(line) && line[hashes] == '#' {
		hashes++
	}
	switch {
	case hashes >= 1 && hashes <= 6 && len(line) > hashes && line[hashes] == ' ':
		return true
	case bytes.HasPrefix(line, []byte("```")), bytes.HasPrefix(line, []byte("~~~")):
		return true
	case bytes.HasPrefix(line, []byte("> ")), bytes.HasPrefix(line, []byte("- ")),
		bytes.HasPrefix(line, []byte("* ")), bytes.HasPrefix(line, []byte("+ ")):
		return true
	}
	if i := bytes.Index(line, []byte("](")); i > 0 && bytes.IndexByte(line[:i], '[') >= 0 {
		return true
	}
	return false
}

func allByte(b []byte, c byte) bool {
	for _, x := range b {
		if x != c {
			return false
		}
	}
	return true
}
