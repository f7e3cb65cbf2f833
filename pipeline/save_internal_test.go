package pipeline

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/docketq/docket/pipeline/analyze"
	"github.com/docketq/docket/pipeline/extract"
)

// Every text field stored with a document is capped, on a rune boundary,
// and so are its lists, whatever the analysis found.
func TestFieldsOf_Capped(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("é", 1<<20)
	many := make([]string, 10_000)
	for i := range many {
		many[i] = huge[:1000]
	}
	amounts := make([]analyze.Amount, 10_000)
	f := fieldsOf(analyze.Fields{Title: huge, Language: huge, Dates: many, KeyPhrases: many, Amounts: amounts})
	if len(f.Title) > extract.MaxTitleBytes || !utf8.ValidString(f.Title) {
		t.Errorf("title of %d bytes", len(f.Title))
	}
	if len(f.Language) > maxFieldBytes {
		t.Errorf("language of %d bytes", len(f.Language))
	}
	if len(f.Dates) > maxFieldItems || len(f.KeyPhrases) > maxFieldItems || len(f.Amounts) > maxFieldItems {
		t.Errorf("%d dates, %d key phrases, %d amounts; want at most %d each", len(f.Dates), len(f.KeyPhrases), len(f.Amounts), maxFieldItems)
	}
	for _, s := range append(f.Dates, f.KeyPhrases...) {
		if len(s) > maxFieldBytes || !utf8.ValidString(s) {
			t.Fatalf("an item of %d bytes", len(s))
		}
	}
}
