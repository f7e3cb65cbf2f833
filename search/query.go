package search

import (
	"strings"
	"unicode"

	"github.com/docketq/docket/embedding"
)

// MaxPhrases caps the phrases of a query; the rest are left out.
const MaxPhrases = 32

// Phrases splits what a user typed into the phrases a chunk must contain
// (docket.ChunkSearchParams.Phrases): each text between double quotes, and
// each other run of non-space characters, trimmed of the punctuation around
// it ("whip-poor-will", "CUDA", "v1.2", "O'Brien"). Runs with no letter or
// digit are left out, and so are function words ("the", "und") unless the
// query has nothing else: "to be or not to be" keeps them all.
func Phrases(q string) []string {
	var quoted, words []string
	for i, part := range strings.Split(q, `"`) {
		if i%2 == 1 { // between quotes
			if p := strings.Join(strings.Fields(part), " "); hasWord(p) {
				quoted = append(quoted, p)
			}
			continue
		}
		for _, w := range strings.Fields(part) {
			if w = strings.TrimFunc(w, notWordRune); hasWord(w) {
				words = append(words, w)
			}
		}
	}
	content := words[:0:0]
	for _, w := range words {
		if !embedding.IsStopword(w) {
			content = append(content, w)
		}
	}
	if len(content) > 0 || len(quoted) > 0 {
		words = content
	}
	quoted = append(quoted, words...)
	return quoted[:min(len(quoted), MaxPhrases)]
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

func hasWord(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return !notWordRune(r) }) >= 0
}
