package analyze

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Title search limits.
const (
	titleMaxLines = 40  // non-empty lines looked at
	titleMaxRunes = 150 // longest heading
	titleMaxWords = 20  // most words in a heading
	titleFallback = 100 // runes kept of the first line when no line looks like a heading
)

// pageLabel matches running headers and footers that are no title.
var pageLabel = regexp.MustCompile(`(?i)^(page|seite|página|pagina|pagine|blz|p\.)\s*\d+(\s*(of|von|de|di|sur|/)\s*\d+)?$|^\d+\s*(/|of)\s*\d+$|^[-–—\s\d]+$`)

// titleMaxLineBytes is how much of a line, spaces collapsed, is looked at:
// more than any heading or fallback takes.
const titleMaxLineBytes = 4 * titleMaxRunes * utf8.UTFMax

// findTitle returns the first heading among the first lines of the text: a
// Markdown "# " heading if there is one, else the first line that looks like
// a heading (short, mostly letters, not ending like a sentence, not a page
// label or a date). Failing both, the start of the first line.
func findTitle(st *stopper, pages []Page) string {
	var lines []string
	for _, p := range pages {
		for line := range strings.Lines(p.Text) {
			if st.stop() || len(lines) >= titleMaxLines {
				break
			}
			if line = cleanPrefix(line, titleMaxLineBytes); line != "" {
				lines = append(lines, line)
			}
		}
	}
	for _, l := range lines {
		if h, ok := strings.CutPrefix(l, "# "); ok && headingLike(clean(h)) {
			return strings.Trim(clean(h), "*_ ")
		}
	}
	for _, l := range lines {
		l = strings.Trim(strings.TrimLeft(l, "#"), "*_ ")
		if headingLike(l) {
			return l
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return truncateWords(lines[0], titleFallback)
}

// headingLike reports whether a line could be a title.
func headingLike(l string) bool {
	n := utf8.RuneCountInString(l)
	if n < 3 || n > titleMaxRunes || len(strings.Fields(l)) > titleMaxWords {
		return false
	}
	if pageLabel.MatchString(l) || len(findDates(l)) > 0 && countWords(nil, l) <= 4 {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(l)
	if strings.ContainsRune(".,;:", last) && !strings.HasSuffix(l, "...") {
		return false
	}
	letters, other := 0, 0
	for _, r := range l {
		switch {
		case unicode.IsLetter(r):
			letters++
		case !unicode.IsSpace(r):
			other++
		}
	}
	return letters >= 2 && letters >= other
}

// truncateWords cuts s to at most limit runes, at a space if there is one.
func truncateWords(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	cut, n := 0, 0
	for i := range s {
		if n == limit {
			cut = i
			break
		}
		n++
	}
	if sp := strings.LastIndexByte(s[:cut], ' '); sp > 0 {
		cut = sp
	}
	return s[:cut]
}

// cleanPrefix is clean(s) cut to at most limit bytes (on a rune boundary).
func cleanPrefix(s string, limit int) string {
	var b strings.Builder
	for f := range strings.FieldsSeq(s) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if n := limit - b.Len(); len(f) > n {
			for n > 0 && !utf8.RuneStart(f[n]) {
				n--
			}
			b.WriteString(f[:max(n, 0)])
			break
		}
		b.WriteString(f)
	}
	return strings.TrimRight(b.String(), " ")
}

// producerPrefixes are what some producers put before the title they store
// in a file's metadata ("Microsoft Word - Report.doc").
var producerPrefixes = []string{"Microsoft Word -", "Microsoft PowerPoint -", "Microsoft Excel -"}

// fileExtensions end a metadata title that is only the name of a file.
var fileExtensions = []string{
	".doc", ".docx", ".dot", ".dotx", ".rtf", ".odt", ".wpd", ".pdf", ".txt", ".md",
	".htm", ".html", ".xls", ".xlsx", ".ppt", ".pptx", ".tif", ".tiff",
}

// metadataTitle is a title from a file's metadata, whitespace collapsed, without a
// producer's prefix; "" when what is left is blank or only a file name, so that the
// title is looked for in the text.
func metadataTitle(s string) string {
	s = clean(s)
	for _, p := range producerPrefixes {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) && (len(s) == len(p) || s[len(p)] == ' ') {
			s = strings.TrimSpace(s[len(p):])
			break
		}
	}
	lower := strings.ToLower(s)
	for _, ext := range fileExtensions {
		if strings.HasSuffix(lower, ext) {
			return ""
		}
	}
	return s
}
