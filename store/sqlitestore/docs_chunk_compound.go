package sqlitestore

import (
	"database/sql/driver"
	"fmt"
	"strings"
	"unicode"

	sqlite3 "modernc.org/sqlite"
)

// A hyphenated compound ("x-Achse", "0-dimensionale", "whip-poor-will")
// is also a token of its own, in the compounds column of the full-text
// index (migrations/005_search_compounds.sql), so that a search for it is
// one look-up of that token: as a phrase of its words ("x" "achse") FTS5
// reads the positions of every chunk that holds both words to check that
// they are adjacent, most of the chunks when the first is a letter or
// digit found nearly everywhere. The compound's words are joined in its
// token by compoundSep, a private-use character, which FTS5's unicode61
// tokenizer counts as a letter (only U+F8E5-U+F8FF are separators): the
// tokenizer then folds and stems the token as one word, alike in the
// index and in a query.
const compoundSep = "\uE000"

// maxCompound caps a compound's length in bytes: longer ones are not
// indexed whole (as on PostgreSQL, where a lexeme has limits).
const maxCompound = 255

// compoundWord reports whether r belongs to a word as the index's
// tokenizer splits them: letters, digits, combining marks and private-use
// characters other than the separators of migrations/002_search.sql.
func compoundWord(r rune) bool {
	if r >= 0xF8E5 && r <= 0xF8FF {
		return false
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r) || unicode.Is(unicode.Co, r)
}

// compoundList returns the hyphenated compounds of text in order, each
// occurrence (so that the index counts them as it counts words): runs of
// words joined by single hyphens (U+002D), at most maxCompound bytes.
func compoundList(text string) []string {
	var out []string
	rs := []rune(text)
	for i := 0; i < len(rs); {
		if !compoundWord(rs[i]) {
			i++
			continue
		}
		j, hyphens := i, 0
	scan:
		for j < len(rs) {
			switch {
			case compoundWord(rs[j]):
				j++
			case rs[j] == '-' && j+1 < len(rs) && compoundWord(rs[j+1]):
				j++
				hyphens++
			default:
				break scan
			}
		}
		if c := string(rs[i:j]); hyphens > 0 && len(c) <= maxCompound {
			out = append(out, c)
		}
		i = j
	}
	return out
}

// compoundToken is the token of a compound ("x-Achse" → "x\uE000Achse").
func compoundToken(c string) string { return strings.ReplaceAll(c, "-", compoundSep) }

// chunkCompounds is the compounds column of a chunk of text: the tokens of
// its compounds, space-separated ("" when it has none).
func chunkCompounds(text string) string {
	cs := compoundList(text)
	for i, c := range cs {
		cs[i] = compoundToken(c)
	}
	return strings.Join(cs, " ")
}

// compoundPhrase returns the token of phrase when the phrase is one
// hyphenated compound (with nothing but spaces and punctuation around
// it), else "".
func compoundPhrase(phrase string) string {
	cs := compoundList(phrase)
	if len(cs) != 1 {
		return ""
	}
	rest := strings.Replace(phrase, cs[0], "", 1)
	if strings.IndexFunc(rest, compoundWord) >= 0 {
		return ""
	}
	return compoundToken(cs[0])
}

// compoundsFunc is the SQL function docket_compounds(text): the compounds
// column of a chunk's text (chunkCompounds), with which migration 005
// fills the column of the chunks stored before it. Every new connection
// has it (modernc.org/sqlite registers it with the driver).
func compoundsFunc(_ *sqlite3.FunctionContext, args []driver.Value) (driver.Value, error) {
	switch v := args[0].(type) {
	case string:
		return chunkCompounds(v), nil
	case []byte:
		return chunkCompounds(string(v)), nil
	case nil:
		return "", nil
	default:
		return nil, fmt.Errorf("docket_compounds: %T is not text", v)
	}
}

func init() {
	sqlite3.MustRegisterDeterministicScalarFunction("docket_compounds", 1, compoundsFunc)
}
