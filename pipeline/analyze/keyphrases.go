package analyze

import (
	"math"
	"sort"
	"strings"
	"unicode/utf8"
)

// maxPhraseWords is the longest key phrase, in words; longer runs of
// content words (often table rows) are not candidates.
const maxPhraseWords = 4

// maxCandidates bounds the distinct candidate phrases kept: once that many
// are known, only their occurrences are counted. Documents of ordinary
// length never have that many.
const maxCandidates = 1 << 16

// keyPhrases ranks the text's candidate phrases, RAKE-style. Candidates are
// runs of content words (with a letter and no digit) between stop words (of
// lang, or English if it is unknown) and breaks (punctuation, line ends,
// table gaps); a run of one word repeated ("aaaa aaaa") is not one. A word scores its degree (how many
// words it shares candidates with, itself included) over its frequency; a
// phrase scores the sum of its words' scores, times 1 + ln(occurrences).
// Phrases inside a better one are left out. Ties go alphabetically.
func keyPhrases(st *stopper, pages []Page, lang string, limit int) []string {
	stop := stopwords[lang]
	if stop == nil {
		stop = stopwords["en"]
	}
	count := map[string]int{} // phrase → occurrences
	var words []string        // the current run
	flush := func() {
		short := len(words) == 1 && utf8.RuneCountInString(words[0]) < 3 // "ms", "nr"
		if len(words) > 0 && len(words) <= maxPhraseWords && !short && !oneWordRepeated(words) {
			phrase := strings.Join(words, " ")
			if _, ok := count[phrase]; ok || len(count) < maxCandidates {
				count[phrase]++
			}
		}
		words = words[:0]
	}
	for _, p := range pages {
		if !tokenize(st, p.Text, func(t token) bool {
			if t.word == "" || !t.alpha || t.digits || stop[t.word] || utf8.RuneCountInString(t.word) < 2 {
				flush()
				return true
			}
			if words = append(words, t.word); len(words) > maxPhraseWords {
				words = words[:maxPhraseWords+1] // too long already
			}
			return true
		}) {
			return []string{}
		}
		flush()
	}
	return rank(count, limit)
}

// rank scores the candidate phrases and returns the best limit of them.
func rank(count map[string]int, limit int) []string {
	freq, degree := map[string]int{}, map[string]int{}
	for phrase, n := range count {
		ws := strings.Fields(phrase)
		for _, w := range ws {
			freq[w] += n
			degree[w] += n * len(ws)
		}
	}
	type scored struct {
		phrase string
		score  float64
	}
	all := make([]scored, 0, len(count))
	for phrase, n := range count {
		var s float64
		for _, w := range strings.Fields(phrase) {
			s += float64(degree[w]) / float64(freq[w])
		}
		all = append(all, scored{phrase, s * (1 + math.Log(float64(n)))})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].score != all[j].score {
			return all[i].score > all[j].score
		}
		return all[i].phrase < all[j].phrase
	})
	out := []string{}
	for _, c := range all {
		if len(out) == limit {
			break
		}
		if !insideAny(c.phrase, out) {
			out = append(out, c.phrase)
		}
	}
	return out
}

// insideAny reports whether phrase is a run of words of one of chosen.
func insideAny(phrase string, chosen []string) bool {
	for _, c := range chosen {
		if c == phrase || strings.Contains(" "+c+" ", " "+phrase+" ") {
			return true
		}
	}
	return false
}

// oneWordRepeated reports whether words are two or more of the same word.
func oneWordRepeated(words []string) bool {
	for _, w := range words[1:] {
		if w != words[0] {
			return false
		}
	}
	return len(words) > 1
}
