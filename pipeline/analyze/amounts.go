package analyze

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// currencySymbols maps symbols and prefixed symbols to ISO 4217 codes.
var currencySymbols = map[string]string{
	"$": "USD", "US$": "USD", "C$": "CAD", "A$": "AUD", "R$": "BRL",
	"€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR", "₩": "KRW", "₽": "RUB", "₺": "TRY", "Fr.": "CHF",
}

// currencyCodes are the ISO 4217 codes recognised next to a number.
const currencyCodes = `USD|EUR|GBP|JPY|CHF|CAD|AUD|NZD|CNY|HKD|SGD|INR|BRL|MXN|SEK|NOK|DKK|PLN|CZK|HUF|RUB|TRY|ZAR|KRW`

// amountReach is how far from its currency an amount may start or end.
const amountReach = 40

const (
	// number: grouped thousands (1,234.56 / 1.234,56 / 1 234,56 / 1'234.50)
	// or plain digits, with at most two decimals.
	number   = `(\d{1,3}(?:[,.' \x{00A0}\x{202F}]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?)`
	currency = `(US\$|C\$|A\$|R\$|Fr\.|[$€£¥₹₩₽₺]|` + currencyCodes + `)`
	gap      = `[ \x{00A0}\x{202F}]?`
)

var (
	amountBefore = regexp.MustCompile(`^` + currency + gap + number) // $1,234.56, USD 99
	amountAfter  = regexp.MustCompile(number + gap + currency + `$`) // 1.234,56 €, 1 234,56 EUR
)

// findAmounts returns the amounts of money in s, in order. An amount starts
// or ends with its currency, so the patterns, anchored there, run only next
// to currency signs and codes.
func findAmounts(s string) []Amount {
	var found []match[Amount]
	add := func(start, end int, cur, num string) {
		code := currencySymbols[cur]
		if code == "" {
			code = cur
		}
		found = append(found, match[Amount]{start, end, Amount{Value: decimal(num), Currency: code}})
	}
	for _, c := range currencySigns(s) {
		if start, end, g, ok := matchIn(amountBefore, s, c[0], min(len(s), c[1]+amountReach)); ok {
			add(start, end, g[1], g[2])
		}
		if start, end, g, ok := matchIn(amountAfter, s, max(0, c[0]-amountReach), c[1]); ok {
			add(start, end, g[2], g[1])
		}
	}
	return values(found)
}

// isCode reports whether a run of capitals is a currency code recognised.
var isCode = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Split(currencyCodes, "|") {
		m[c] = true
	}
	return m
}()

// currencySigns returns the spans of currency symbols, "Fr." and currency
// codes in s.
func currencySigns(s string) [][2]int {
	var out [][2]int
	caps := -1 // start of the current run of capitals
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if caps < 0 {
				caps = i
			}
		} else {
			if caps >= 0 && isCode[s[caps:i]] {
				out = append(out, [2]int{caps, i})
			}
			caps = -1
		}
		switch {
		case r == '$':
			out = append(out, [2]int{dollarStart(s, i), i + 1})
		case strings.ContainsRune("€£¥₹₩₽₺", r):
			out = append(out, [2]int{i, i + utf8.RuneLen(r)})
		case r == 'F' && strings.HasPrefix(s[i:], "Fr."):
			out = append(out, [2]int{i, i + 3})
		}
	}
	if caps >= 0 && isCode[s[caps:]] {
		out = append(out, [2]int{caps, len(s)})
	}
	return out
}

// dollarStart returns where the dollar sign at i starts, taking in a
// country prefix: US$, C$, A$, R$.
func dollarStart(s string, i int) int {
	switch {
	case i >= 2 && s[i-2:i] == "US":
		return i - 2
	case i >= 1 && strings.IndexByte("CAR", s[i-1]) >= 0:
		return i - 1
	}
	return i
}

// decimal normalises a written number to digits with "." before any
// fraction. Spaces and apostrophes group thousands. When both "," and "."
// appear, the last one is the decimal separator; when only one appears, it
// groups thousands if it appears more than once or is followed by exactly
// three digits, and is the decimal separator otherwise.
func decimal(num string) string {
	num = strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\'', '\u00a0', '\u202f':
			return -1
		}
		return r
	}, num)
	dot, comma := strings.LastIndexByte(num, '.'), strings.LastIndexByte(num, ',')
	sep := max(dot, comma)
	switch {
	case sep < 0:
	case dot >= 0 && comma >= 0:
	case strings.Count(num, num[sep:sep+1]) > 1 || len(num)-sep-1 == 3:
		sep = -1 // grouping only
	}
	intPart, frac := num, ""
	if sep >= 0 {
		intPart, frac = num[:sep], num[sep+1:]
	}
	intPart = strings.TrimLeft(strings.Map(func(r rune) rune {
		if r == ',' || r == '.' {
			return -1
		}
		return r
	}, intPart), "0")
	if intPart == "" {
		intPart = "0"
	}
	if frac == "" {
		return intPart
	}
	return intPart + "." + frac
}
