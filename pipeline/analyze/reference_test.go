package analyze

import (
	"math/rand/v2"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/docketq/docket/internal/race"
)

// The reference scanners find amounts and dates with unanchored regular
// expressions over the whole window around each currency sign and year:
// the definition the linear scanners must agree with.

const (
	refNumber   = `(\d{1,3}(?:[,.' \x{00A0}\x{202F}]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?)`
	refCurrency = `(US\$|C\$|A\$|R\$|Fr\.|[$€£¥₹₩₽₺]|` + currencyCodes + `)`
	refGap      = `[ \x{00A0}\x{202F}]?`
)

var (
	refAmountBefore = regexp.MustCompile(`^` + refCurrency + refGap + refNumber)
	refAmountAfter  = regexp.MustCompile(refNumber + refGap + refCurrency + `$`)
)

func refFindAmounts(s string) []Amount {
	var found []match[Amount]
	add := func(start, end int, cur, num string) {
		code := currencySymbols[cur]
		if code == "" {
			code = cur
		}
		if value := decimal(num); strings.Trim(value, "0.") != "" { // zero is no amount
			found = append(found, match[Amount]{start, end, Amount{Value: value, Currency: code}})
		}
	}
	eachCurrencySign(s, nil, func(c0, c1 int) bool {
		if start, end, g, ok := matchIn(refAmountBefore, s, c0, min(len(s), c1+amountReach)); ok {
			add(start, end, g.at(1), g.at(2))
		}
		if start, end, g, ok := matchIn(refAmountAfter, s, max(0, c0-amountReach), c1); ok {
			add(start, end, g.at(2), g.at(1))
		}
		return true
	})
	return refValues(found)
}

// refDatePatterns are datePatterns with the year-last ones unanchored at
// their start.
var refDatePatterns = func() []*regexp.Regexp {
	res := make([]*regexp.Regexp, len(datePatterns))
	for i, p := range datePatterns {
		res[i] = p.re
		if !p.yearFirst {
			res[i] = regexp.MustCompile(strings.TrimPrefix(p.re.String(), "^"))
		}
	}
	return res
}()

func refFindDates(s string) []string {
	var found []match[string]
	for i := 0; i < len(s); i++ {
		j := i
		for j < len(s) && isDigit(rune(s[j])) {
			j++
		}
		if j-i < 4 {
			continue
		}
		for k, p := range datePatterns {
			lo, hi, re := max(0, j-dateReach), j, refDatePatterns[k]
			if p.yearFirst {
				lo, hi = i, min(len(s), i+dateReach)
			}
			start, end, g, ok := matchIn(re, s, lo, hi)
			if !ok {
				continue
			}
			if day, ok := dayOf(p.read(g)); ok {
				found = append(found, match[string]{start, end, isoDate(day)})
			}
		}
		i = j
	}
	return refValues(found)
}

func refValues[T any](found []match[T]) []T {
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].start != found[j].start {
			return found[i].start < found[j].start
		}
		return found[i].end > found[j].end
	})
	var out []T
	end := 0
	for _, f := range found {
		if f.start >= end {
			out = append(out, f.value)
			end = f.end
		}
	}
	return out
}

// referenceTexts is how many random texts the reference tests compare on:
// fewer under the race detector, which slows regular expressions down.
func referenceTexts() int {
	if race.Enabled {
		return 300
	}
	return 3000
}

// randomText joins pieces drawn from parts, in random order.
func randomText(r *rand.Rand, parts []string, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	return b.String()
}

func TestFindAmounts_reference(t *testing.T) {
	t.Parallel()
	parts := []string{"1", "2", "0", "12", "123", "1234", ",", ".", "'", " ", "  ", "\u00a0", "\u202f", "$", "US$", "C$",
		"R$", "€", "£", "Fr.", "EUR", "USD", "EURO", "x", "a", "B", "\n", "-", "東", "\xff"}
	r := rand.New(rand.NewPCG(1, 2))
	found := 0
	for i := range referenceTexts() {
		s := randomText(r, parts, 1+i%40)
		got, want := findAmounts(s), refFindAmounts(s)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("findAmounts(%q) = %v, the reference %v", s, got, want)
		}
		found += len(got)
	}
	if found < referenceTexts()/5 {
		t.Fatalf("%d amounts found: the texts test too little", found)
	}
}

func TestFindDates_reference(t *testing.T) {
	t.Parallel()
	parts := []string{"1", "3", "15", "31", "2024", " 2024", "1999", "20245", "/", "-", ".", ",", " ", "  ", "\n", "\u00a0",
		"15/03/", "1.1.", "2024-03-", "03-15", "T10:00Z", "年", "3月15日", "March ", "Mar. ", "Sept ", "15 ", "15th ", "1er ",
		"de ", "del ", "marzo ", "janvier ", "x", "abcdefghijk", "東", "e\u0301", "\xff"}
	r := rand.New(rand.NewPCG(3, 4))
	found := 0
	for i := range referenceTexts() {
		s := randomText(r, parts, 1+i%30)
		got, want := findDates(s), refFindDates(s)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("findDates(%q) = %v, the reference %v", s, got, want)
		}
		found += len(got)
	}
	if found < referenceTexts()/20 {
		t.Fatalf("%d dates found: the texts test too little", found)
	}
}
