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

// findTitle returns the first heading among the first lines of the text: a
// Markdown "# " heading if there is one, else the first line that looks like
// a heading (short, mostly letters, not ending like a sentence, not a page
// label or a date). Failing both, the start of the first line.
func findTitle(pages []Page) string {
	var lines []string
	for _, p := range pages {
		for line := range strings.Lines(p.Text) {
			if line = clean(line); line != "" && len(lines) < titleMaxLines {
				lines = append(lines, line)
			}
		}
		if len(lines) >= titleMaxLines {
			break
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
	if pageLabel.MatchString(l) || len(findDates(l)) > 0 && countWords(l) <= 4 {
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
