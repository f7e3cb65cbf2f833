package analyze

import "unicode"

// Limits on how much text language detection reads.
const (
	langMaxRunes  = 50_000 // for the script count
	langMaxTokens = 5_000  // for the stop-word count
)

// detectLanguage returns the ISO 639-1 code of the text's language, or ""
// if it cannot tell. A text mostly in a script that one language owns here
// (Hangul, Kana with Han, Han alone, Greek) is named by the script;
// otherwise the language whose stop words the text uses most wins, if it
// uses at least a few.
func detectLanguage(st *stopper, pages []Page) string {
	if lang := byScript(st, pages); lang != "" {
		return lang
	}
	score := map[string]float64{}
	n := 0
	for _, p := range pages {
		tokenize(st, p.Text, func(t token) bool {
			if t.word != "" {
				n++
				for lang, w := range evidence[t.word] {
					score[lang] += w
				}
			}
			return n < langMaxTokens
		})
		if n >= langMaxTokens {
			break
		}
	}
	best, second := "", 0.0
	for _, lang := range languages {
		switch s := score[lang]; {
		case best == "" || s > score[best]:
			best, second = lang, score[best]
		case s > second:
			second = s
		}
	}
	if score[best] < 2 || score[best] < 1.2*second {
		return ""
	}
	return best
}

// byScript names the language from the script of most letters, if that
// script tells it.
func byScript(st *stopper, pages []Page) string {
	var letters, han, kana, hangul, greek int
	for _, p := range pages {
		for _, r := range p.Text {
			if letters >= langMaxRunes || st.stop() {
				break
			}
			if !unicode.IsLetter(r) {
				continue
			}
			letters++
			switch {
			case r < 0x370:
			case unicode.Is(unicode.Han, r):
				han++
			case unicode.In(r, unicode.Hiragana, unicode.Katakana):
				kana++
			case unicode.Is(unicode.Hangul, r):
				hangul++
			case unicode.Is(unicode.Greek, r):
				greek++
			}
		}
	}
	switch {
	case letters == 0:
		return ""
	case 2*hangul > letters:
		return "ko"
	case 2*(han+kana) > letters && 10*kana >= han+kana:
		return "ja"
	case 2*(han+kana) > letters:
		return "zh"
	case 2*greek > letters:
		return "el"
	}
	return ""
}
