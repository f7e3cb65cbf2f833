package search

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Snippet sizes, in words.
const (
	snippetBefore = 8  // words shown before the first match
	snippetWords  = 40 // words shown in all
)

// Snippet returns the passage of text around the first of its words that
// the phrases' words match, as HTML: the text escaped, each matching word
// in <mark>, "…" where the text was cut. A word matches the same word in
// any case, or one that shares its first four or more letters and differs
// from it by at most three more (the stems the index matched: "payment",
// "payments"). With no match it is the start of the text.
func Snippet(text string, phrases []string) string {
	terms := map[string]bool{}
	for _, p := range phrases {
		for _, w := range strings.FieldsFunc(p, notWordRune) {
			terms[strings.ToLower(w)] = true
		}
	}
	words := wordSpans(text)
	first := -1
	marked := make([]bool, len(words))
	for i, sp := range words {
		if matchesAny(strings.ToLower(text[sp[0]:sp[1]]), terms) {
			marked[i] = true
			if first < 0 {
				first = i
			}
		}
	}
	from := max(0, first-snippetBefore)
	to := min(len(words), from+snippetWords)
	if len(words) == 0 {
		return ""
	}
	var b strings.Builder
	start, end := words[from][0], words[to-1][1]
	if from > 0 {
		b.WriteString("… ")
	}
	at := start
	for i := from; i < to; i++ {
		if !marked[i] {
			continue
		}
		b.WriteString(html.EscapeString(text[at:words[i][0]]))
		b.WriteString("<mark>" + html.EscapeString(text[words[i][0]:words[i][1]]) + "</mark>")
		at = words[i][1]
	}
	b.WriteString(html.EscapeString(text[at:end]))
	if to < len(words) {
		b.WriteString(" …")
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// wordSpans returns the byte spans of text's runs of letters and digits.
func wordSpans(text string) [][2]int {
	var spans [][2]int
	start := -1
	for i, r := range text {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			spans = append(spans, [2]int{start, i})
			start = -1
		}
	}
	if start >= 0 {
		spans = append(spans, [2]int{start, len(text)})
	}
	return spans
}

func matchesAny(w string, terms map[string]bool) bool {
	if terms[w] {
		return true
	}
	for t := range terms {
		if sameStem(w, t) {
			return true
		}
	}
	return false
}

// sameStem reports whether one of a and b starts with the other, the
// shorter having four letters or more and the longer at most three more.
func sameStem(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	na, nb := utf8.RuneCountInString(a), utf8.RuneCountInString(b)
	return na >= 4 && nb-na <= 3 && strings.HasPrefix(b, a)
}
