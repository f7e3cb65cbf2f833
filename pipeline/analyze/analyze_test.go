package analyze

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestFindDates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want []string
	}{
		{"Signed 2024-03-15.", []string{"2024-03-15"}},
		{"at 2024-03-15T10:30:00Z and 2024/12/01", []string{"2024-03-15", "2024-12-01"}},
		{"Datum: 15/03/2024", []string{"2024-03-15"}},
		{"Datum: 15.03.2024, 01-02-2023", []string{"2024-03-15", "2023-02-01"}},
		{"due 03/04/2024 (day first)", []string{"2024-04-03"}},
		{"US style 12/31/2024", []string{"2024-12-31"}},
		{"March 15, 2024", []string{"2024-03-15"}},
		{"on Mar. 5th 2024 and Sept 30, 2023", []string{"2024-03-05", "2023-09-30"}},
		{"15 March 2024", []string{"2024-03-15"}},
		{"Berlin, den 15. März 2024", []string{"2024-03-15"}},
		{"am 1. JANUAR 2025", []string{"2025-01-01"}},
		{"le 1er janvier 2024 et le 31 décembre 2024", []string{"2024-01-01", "2024-12-31"}},
		{"a 15 de marzo de 2024", []string{"2024-03-15"}},
		{"em 1º de março de 2024", []string{"2024-03-01"}},
		{"il 20 giugno 2024", []string{"2024-06-20"}},
		{"van 1 april 2024 tot 30 september 2024", []string{"2024-04-01", "2024-09-30"}},
		{"発売予定日は2024年4月1日です", []string{"2024-04-01"}},
		{"repeated: 2024-01-02 and again 2024-01-02", []string{"2024-01-02", "2024-01-02"}},
		{"not dates: 2024-02-30, 31/04/2024, 1999-13-01, 12345-01-01, 2024-01-015, v1.2.2024x", nil},
		{"mixed separators 15/03.2024 and 2024-03/15", nil},
		{"out of range 15/03/1700 and 2300-01-01", nil},
		{"phone 030 1234 5678, total 2024 items", nil},
	}
	for _, tt := range tests {
		if got := findDates(tt.text); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("findDates(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestFindAmounts(t *testing.T) {
	t.Parallel()
	a := func(v, c string) Amount { return Amount{v, c} }
	tests := []struct {
		text string
		want []Amount
	}{
		{"Total: $1,234.56", []Amount{a("1234.56", "USD")}},
		{"Summe €1.234,56", []Amount{a("1234.56", "EUR")}},
		{"Prix : 1 234,56 EUR", []Amount{a("1234.56", "EUR")}},
		{"Prix : 1\u00a0234,56\u00a0€", []Amount{a("1234.56", "EUR")}},
		{"fee USD 99 or 99 USD", []Amount{a("99", "USD"), a("99", "USD")}},
		{"£5 and ¥1,500,000 and ₹250", []Amount{a("5", "GBP"), a("1500000", "JPY"), a("250", "INR")}},
		{"R$ 1.500.000,00 and US$ 20", []Amount{a("1500000.00", "BRL"), a("20", "USD")}},
		{"CHF 1'234.50", []Amount{a("1234.50", "CHF")}},
		{"$1,234 and $1.5 and € 12,5", []Amount{a("1234", "USD"), a("1.5", "USD"), a("12.5", "EUR")}},
		{"$0.99 and $007", []Amount{a("0.99", "USD"), a("7", "USD")}},
		{"not money: 1,234.56 alone, EURO 5, 5 euros, $5m, USD99x, 3 eur", nil},
	}
	for _, tt := range tests {
		if got := findAmounts(tt.text); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("findAmounts(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestDetectLanguage(t *testing.T) {
	t.Parallel()
	tests := []struct{ text, want string }{
		{"The contract is signed by both parties and it will be valid for one year.", "en"},
		{"Der Vertrag wird von beiden Parteien unterschrieben und ist ein Jahr gültig.", "de"},
		{"Le contrat est signé par les deux parties et il est valable pour une année.", "fr"},
		{"El contrato es firmado por las dos partes y es válido por un año.", "es"},
		{"Il contratto è firmato dalle due parti e sarà valido per un anno.", "it"},
		{"Het contract wordt door beide partijen ondertekend en is een jaar geldig.", "nl"},
		{"O contrato é assinado pelas duas partes e será válido por um ano.", "pt"},
		{"東京は日本の首都です。", "ja"},
		{"北京是中国的首都。", "zh"},
		{"서울은 한국의 수도입니다.", "ko"},
		{"Η Αθήνα είναι η πρωτεύουσα της Ελλάδας.", "el"},
		{"Invoice", ""},
		{"12345 67890", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := detectLanguage(nil, []Page{{1, tt.text}}); got != tt.want {
			t.Errorf("detectLanguage(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestFindTitle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		pages []string
		want  string
	}{
		{"first short line", []string{"Annual Report 2023\n\nThis report describes the year."}, "Annual Report 2023"},
		{"markdown heading wins", []string{"---\ntitle: x\n---\nIntro text that is long enough.\n\n# The Real Title\n"}, "The Real Title"},
		{"skips page labels and dates", []string{"Page 1 of 3\n15.03.2024\n\nMinutes of the Board Meeting\n"}, "Minutes of the Board Meeting"},
		{"skips sentences", []string{"This is a sentence.\nShort Heading\n"}, "Short Heading"},
		{"emphasis stripped", []string{"**Bold Title**\n"}, "Bold Title"},
		{"title on a later page", []string{"", "  \n", "Second Page Title\n"}, "Second Page Title"},
		{"fallback cuts the first line", []string{strings.Repeat("word ", 40) + "end."}, strings.TrimSpace(strings.Repeat("word ", 20))},
		{"no text", []string{"", " \n "}, ""},
	}
	for _, tt := range tests {
		var pages []Page
		for i, p := range tt.pages {
			pages = append(pages, Page{i + 1, p})
		}
		if got := findTitle(nil, pages); got != tt.want {
			t.Errorf("%s: findTitle = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestCountWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"one two  three\nfour", 4},
		{"state-of-the-art — it's 2024!", 3},
		{"東京は日本", 5},
		{"Tokyo東京 x", 4},
		{"e\u0301cole • ---", 1},
	}
	for _, tt := range tests {
		if got := countWords(nil, tt.text); got != tt.want {
			t.Errorf("countWords(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}

func TestAnalyze_options(t *testing.T) {
	t.Parallel()
	pages := []Page{{1, "Heading Line\n\nThe queue stores jobs. The queue leases jobs to workers. Workers renew leases."}}
	f := Analyze(pages, Options{Title: "  Given \n Title ", MaxKeyPhrases: 2})
	if f.Title != "Given Title" || len(f.KeyPhrases) != 2 || f.PageCount != 1 || f.Language != "en" {
		t.Fatalf("fields %+v", f)
	}
	if f := Analyze(nil, Options{}); f.Dates == nil || f.Amounts == nil || f.KeyPhrases == nil || f.PageCount != 0 {
		t.Fatalf("no pages: %+v", f)
	}
}

func TestAnalyze_limits(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for d := 1; d <= 28; d++ {
		fmt.Fprintf(&b, "2024-02-%02d ", d)
	}
	f := Analyze([]Page{{1, b.String() + "$1 $2 $3 $4"}}, Options{MaxItems: 3})
	if len(f.Dates) != 3 || len(f.Amounts) != 3 {
		t.Fatalf("dates %v amounts %v, want 3 each", f.Dates, f.Amounts)
	}
}

// TestAnalyze_longLine checks that one huge line is still read whole and fast.
func TestAnalyze_longLine(t *testing.T) {
	t.Parallel()
	line := strings.Repeat("paid $5 on 15/03/2024 ", 2_000) + "and 1 234,56 EUR on 2023-01-02"
	f := Analyze([]Page{{1, line}}, Options{})
	want := []string{"2024-03-15", "2023-01-02"}
	if !reflect.DeepEqual(f.Dates, want) || len(f.Amounts) != 2 || f.Amounts[1] != (Amount{"1234.56", "EUR"}) {
		t.Fatalf("dates %v amounts %v", f.Dates, f.Amounts)
	}
}

// Overview finds the quick fields exactly as Analyze does, and nothing else.
func TestOverview_SameAsAnalyze(t *testing.T) {
	t.Parallel()
	pages := []Page{
		{Number: 1, Text: "# Harbour survey\n\nThe harbour survey counted seventeen lighthouses in March 2026."},
		{Number: 2, Text: "Storm damage to the northern pier was repaired in May for EUR 12,500."},
	}
	for _, opts := range []Options{{}, {Title: "From the metadata"}} {
		full, quick := Analyze(pages, opts), Overview(pages, opts)
		if quick.Title != full.Title || quick.Language != full.Language || quick.PageCount != full.PageCount ||
			quick.WordCount != full.WordCount || quick.Title == "" || quick.Language != "en" || quick.WordCount < 20 {
			t.Errorf("Overview %+v, Analyze %+v: want the same title, language and counts", quick, full)
		}
		if quick.Dates != nil || quick.Amounts != nil || quick.KeyPhrases != nil {
			t.Errorf("Overview %+v: want no dates, amounts or key phrases", quick)
		}
	}
}

// TestAnalyze_MetadataTitle: a producer's prefix is no part of a title, and a
// metadata title that is only a file name gives way to the text's heading.
func TestAnalyze_MetadataTitle(t *testing.T) {
	t.Parallel()
	pages := []Page{{Text: "Quarterly Report\n\nRevenue grew in every region this quarter.\n"}}
	for _, tc := range []struct{ meta, want string }{
		{"Microsoft Word - Budget Proposal 2024", "Budget Proposal 2024"},
		{"Microsoft PowerPoint - Sales Kickoff", "Sales Kickoff"},
		{"Microsoft Excel - Forecast", "Forecast"},
		{"Microsoft Word - T081E.DOC", "Quarterly Report"},
		{"report final.docx", "Quarterly Report"},
		{`C:\scans\0042.PDF`, "Quarterly Report"},
		{"notes.txt", "Quarterly Report"},
		{"Microsoft Word - ", "Quarterly Report"},
		{"Using the .doc format", "Using the .doc format"},
		{"Version 2.0", "Version 2.0"},
	} {
		if got := Analyze(pages, Options{Title: tc.meta}).Title; got != tc.want {
			t.Errorf("metadata title %q: title %q, want %q", tc.meta, got, tc.want)
		}
	}
}

// TestFindAmounts_Zero: a zero is never an amount of money worth reporting
// (it comes from a false match such as a form's blank "0 CAD").
func TestFindAmounts_Zero(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"balance 0 CAD", "$0.00 due", "€ 0,00", "USD 000"} {
		if got := findAmounts(text); len(got) != 0 {
			t.Errorf("findAmounts(%q) = %v, want none", text, got)
		}
	}
	if got := findAmounts("0 CAD and then CAD 12"); !reflect.DeepEqual(got, []Amount{{"12", "CAD"}}) {
		t.Errorf("findAmounts with a zero and an amount = %v, want only the amount", got)
	}
}

// TestKeyPhrases_RepeatedWord: a run of one word repeated (filler such as
// "aaaa aaaa aaaa") is not a key phrase.
func TestKeyPhrases_RepeatedWord(t *testing.T) {
	t.Parallel()
	text := "aaaa aaaa aaaa. Quarterly revenue growth. aaaa aaaa aaaa. Quarterly revenue growth.\n"
	got := Analyze([]Page{{Text: text}}, Options{MaxKeyPhrases: 5}).KeyPhrases
	for _, p := range got {
		if ws := strings.Fields(p); len(ws) > 1 && strings.Count(p, ws[0]) == len(ws) {
			t.Errorf("key phrases %q: %q is one word repeated", got, p)
		}
	}
	if len(got) == 0 || got[0] != "quarterly revenue growth" {
		t.Errorf("key phrases %q, want quarterly revenue growth first", got)
	}
}
