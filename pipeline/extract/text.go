package extract

import (
	"strings"
)

// extractText returns Markdown and plain text as they are, normalised. A form feed starts a new
// page; the title is the first Markdown heading.
func extractText(typ Type, data []byte) *Document {
	s := strings.ToValidUTF8(string(data), "\uFFFD")
	s = strings.TrimPrefix(s, "\uFEFF")
	doc := &Document{Pages: pagesFrom(strings.Split(s, "\f"))}
	if typ == TypeMarkdown {
		doc.Title = markdownTitle(s)
	}
	return doc
}

// markdownTitle returns the text of the first ATX ("# Title") or setext ("Title\n===")
// heading outside fenced code, or "".
func markdownTitle(s string) string {
	fenced := false
	prev := ""
	for line := range strings.Lines(s) {
		line = strings.TrimRight(line, " \t\r\n")
		switch {
		case strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~"):
			fenced = !fenced
		case fenced:
		case atxLevel(line) > 0:
			return Normalize(strings.TrimRight(strings.TrimLeft(line, "#"), "# \t"))
		case setextUnderline([]byte(prev), []byte(line)):
			return Normalize(prev)
		}
		prev = strings.TrimSpace(line)
		if fenced {
			prev = ""
		}
	}
	return ""
}

// atxLevel returns the level (1–6) of an ATX heading line, or 0.
func atxLevel(line string) int {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || len(line) == n || line[n] != ' ' {
		return 0
	}
	return n
}
