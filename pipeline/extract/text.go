package extract

import (
	"regexp"
	"strings"
)

// extractText returns Markdown and plain text as they are, normalised. A form feed starts a new
// page; the title is the top Markdown heading (markdownTitle).
func extractText(typ Type, data []byte) *Document {
	s := strings.ToValidUTF8(string(data), "\uFFFD")
	s = strings.TrimPrefix(s, "\uFEFF")
	doc := &Document{Pages: pagesFrom(strings.Split(s, "\f"))}
	if typ == TypeMarkdown {
		doc.Title = markdownTitle(s)
	}
	return doc
}

// markdownTitle returns the text of the document's top heading: the first of the highest level
// among its ATX ("# Title") and setext ("Title\n===", level 1; "---", level 2) headings outside
// fenced code, with Markdown links and images reduced to their text; "" when it has none. A
// README often opens with badges or a sponsor's "### [link](url)" before its "# Name".
func markdownTitle(s string) string {
	fenced := false
	prev := ""
	title, best := "", 7
	for line := range strings.Lines(s) {
		line = strings.TrimRight(line, " \t\r\n")
		switch {
		case strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~"):
			fenced = !fenced
		case fenced:
		case atxLevel(line) > 0:
			if l := atxLevel(line); l < best {
				title, best = strings.TrimRight(strings.TrimLeft(line, "#"), "# \t"), l
			}
		case setextUnderline([]byte(prev), []byte(line)):
			if l := 1 + btoi(line[0] == '-'); l < best {
				title, best = prev, l
			}
		}
		if best == 1 {
			break
		}
		prev = strings.TrimSpace(line)
		if fenced {
			prev = ""
		}
	}
	return Normalize(markdownLink.ReplaceAllString(title, "$1"))
}

// markdownLink matches an inline link or image, its text as the first group.
var markdownLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
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
