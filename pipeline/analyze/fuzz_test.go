package analyze

import (
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var decimalValue = regexp.MustCompile(`^\d+(\.\d{1,2})?$`)

func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"", "# Title\n\nMarch 15, 2024 $1,234.56", "15. März 2024 1.234,56 €\f1 234,56 EUR USD 99",
		"2024-02-30 31/04/2024 99/99/9999", "東京は2024年4月1日 ¥1,500", "\xff\xfe\x00 $ € 1.2.3,4,5",
		"1er janvier 2024, 15 de marzo de 2024", strings.Repeat("word ", 50) + "\n\nPage 1 of 2",
	} {
		f.Add(s, "")
	}
	f.Add("body text", "Given Title")
	f.Fuzz(func(t *testing.T, text, title string) {
		var pages []Page
		for i, p := range strings.Split(text, "\f") {
			pages = append(pages, Page{Number: i + 1, Text: p})
		}
		fields := Analyze(pages, Options{Title: title})
		checkFields(t, fields, len(pages))
	})
}

func checkFields(t *testing.T, f Fields, pages int) {
	t.Helper()
	if f.PageCount != pages || f.WordCount < 0 || len(f.KeyPhrases) > 10 {
		t.Fatalf("counts: %+v", f)
	}
	if strings.ContainsAny(f.Title, "\n\r\t") || utf8.ValidString(f.Title) && strings.TrimSpace(f.Title) != f.Title {
		t.Fatalf("title %q not cleaned", f.Title)
	}
	switch f.Language {
	case "", "en", "de", "fr", "es", "it", "nl", "pt", "ja", "zh", "ko", "el":
	default:
		t.Fatalf("language %q", f.Language)
	}
	for _, d := range f.Dates {
		if _, err := time.Parse(time.DateOnly, d); err != nil {
			t.Fatalf("date %q: %v", d, err)
		}
	}
	for _, a := range f.Amounts {
		if !decimalValue.MatchString(a.Value) || len(a.Currency) != 3 {
			t.Fatalf("amount %+v", a)
		}
	}
	for _, p := range f.KeyPhrases {
		if p == "" || p != strings.ToLower(p) && utf8.ValidString(p) {
			t.Fatalf("key phrase %q", p)
		}
	}
}
