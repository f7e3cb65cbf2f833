package analyze

import (
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

// An amount is a currency (a symbol, "US$", "Fr." or a code) and a number,
// in either order, with at most one space between them. A number is
// grouped thousands (1,234.56 / 1.234,56 / 1 234,56 / 1'234.50) or plain
// digits, with at most two decimals: as a regular expression, with the
// leftmost-first choices the scanners below make,
//
//	\d{1,3}(?:[,.' \x{00A0}\x{202F}]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?
//
// Amounts are read around the currency signs only, within amountReach
// bytes, in time linear in the text. An amount whose value is zero is left
// out.

// findAmounts returns the amounts of money in s, in order.
func findAmounts(s string) []Amount {
	var out []Amount
	scanAmounts(s, nil, func(a Amount) bool { out = append(out, a); return true })
	return out
}

// scanAmounts passes the amounts of money in s to yield, in order, until
// yield returns false or st stops.
func scanAmounts(s string, st *stopper, yield func(Amount) bool) {
	p := picker[Amount]{yield: yield}
	add := func(start, end int, cur, num string) {
		code := currencySymbols[cur]
		if code == "" {
			code = cur
		}
		value := decimal(num)
		if strings.Trim(value, "0.") == "" {
			return // a zero: a blank on a form, or a number that only looked like money
		}
		p.add(match[Amount]{start, end, Amount{Value: value, Currency: code}})
	}
	ok := eachCurrencySign(s, st, func(c0, c1 int) bool {
		if !p.flush(c0 - amountReach - utf8.UTFMax) {
			return false
		}
		if end, num, ok := amountBefore(s, c0, c1); ok {
			add(c0, end, s[c0:c1], num)
		}
		if start, num, ok := amountAfter(s, c0, c1); ok {
			add(start, c1, s[c0:c1], num)
		}
		return true
	})
	if ok {
		p.flush(len(s) + 1)
	}
}

// amountBefore reads the amount that starts with the currency s[c0:c1]
// and ends within amountReach bytes of it: its end and its number.
func amountBefore(s string, c0, c1 int) (end int, num string, ok bool) {
	w := s[:runeCeil(s, min(len(s), c1+amountReach))]
	i := c1 + gapAt(w, c1)
	if end = numberEnd(w, i); end < 0 || !standsAlone(s, c0, end) {
		return 0, "", false
	}
	return end, s[i:end], true
}

// amountAfter reads the amount that ends with the currency s[c0:c1] and
// starts within amountReach bytes of it: the leftmost start from which a
// number and a space at most reach the currency. The number is made of
// digits and separators, so the start is in the run of those before it.
func amountAfter(s string, c0, c1 int) (start int, num string, ok bool) {
	lo := runeCeil(s, max(0, c0-amountReach))
	end := c0
	if r, w := utf8.DecodeLastRuneInString(s[lo:c0]); isGap(r) {
		end -= w
	}
	i := end
	for i > lo {
		r, w := utf8.DecodeLastRuneInString(s[lo:i])
		if !isDigit(r) && !isGroupSep(r) {
			break
		}
		i -= w
	}
	for ; i < end; i++ {
		if isDigit(rune(s[i])) && isNumber(s[i:end]) {
			if !standsAlone(s, i, c1) {
				return 0, "", false
			}
			return i, s[i:end], true
		}
	}
	return 0, "", false
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func isGap(r rune) bool { return r == ' ' || r == '\u00a0' || r == '\u202f' }

func isGroupSep(r rune) bool { return r == ',' || r == '.' || r == '\'' || isGap(r) }

// gapAt returns the length of the space at s[i:], 0 if there is none.
func gapAt(s string, i int) int {
	if r, w := utf8.DecodeRuneInString(s[i:]); isGap(r) {
		return w
	}
	return 0
}

// digitsAt returns how many digits s has from i on.
func digitsAt(s string, i int) int {
	n := i
	for n < len(s) && isDigit(rune(s[n])) {
		n++
	}
	return n - i
}

// numberEnd returns where the number that starts at s[i:] ends, the
// longest the leftmost-first choices allow, or -1 if no number starts
// there.
func numberEnd(s string, i int) int {
	d := digitsAt(s, i)
	if d == 0 {
		return -1
	}
	if end, groups := groupsEnd(s, i+d); d <= 3 && groups > 0 {
		return fractionEnd(s, end)
	}
	return fractionEnd(s, i+d)
}

// groupsEnd returns the end of the groups of a separator and three digits
// from s[i:] on, and how many there are.
func groupsEnd(s string, i int) (end, groups int) {
	for {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !isGroupSep(r) || digitsAt(s, i+w) < 3 {
			return i, groups
		}
		i += w + 3
		groups++
	}
}

// fractionEnd returns the end of the decimals at s[i:] ("," or "." and up
// to two digits), i if there are none.
func fractionEnd(s string, i int) int {
	if i < len(s) && (s[i] == '.' || s[i] == ',') {
		if d := digitsAt(s, i+1); d > 0 {
			return i + 1 + min(d, 2)
		}
	}
	return i
}

// isNumber reports whether all of t is a number.
func isNumber(t string) bool {
	d := digitsAt(t, 0)
	if d == 0 {
		return false
	}
	if isFraction(t[d:]) {
		return true
	}
	for i := d; d <= 3; {
		r, w := utf8.DecodeRuneInString(t[i:])
		if !isGroupSep(r) || digitsAt(t, i+w) < 3 {
			return false
		}
		if i += w + 3; isFraction(t[i:]) {
			return true
		}
	}
	return false
}

// isFraction reports whether t is empty or "," or "." and one or two digits.
func isFraction(t string) bool {
	return t == "" || len(t) >= 2 && len(t) <= 3 && (t[0] == '.' || t[0] == ',') && digitsAt(t, 1) == len(t)-1
}

// isCode reports whether a run of capitals is a currency code recognised.
var isCode = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Split(currencyCodes, "|") {
		m[c] = true
	}
	return m
}()

// eachCurrencySign calls yield with the span of each currency symbol,
// "Fr." and currency code in s, in order, until yield returns false or st
// stops; it reports whether it read s to its end.
func eachCurrencySign(s string, st *stopper, yield func(start, end int) bool) bool {
	caps := -1 // start of the current run of capitals
	for i, r := range s {
		if st.stop() {
			return false
		}
		if r >= 'A' && r <= 'Z' {
			if caps < 0 {
				caps = i
			}
		} else {
			if caps >= 0 && isCode[s[caps:i]] && !yield(caps, i) {
				return false
			}
			caps = -1
		}
		ok := true
		switch {
		case r == '$':
			ok = yield(dollarStart(s, i), i+1)
		case r >= 0x80 && strings.ContainsRune("€£¥₹₩₽₺", r):
			ok = yield(i, i+utf8.RuneLen(r))
		case r == 'F' && strings.HasPrefix(s[i:], "Fr."):
			ok = yield(i, i+3)
		}
		if !ok {
			return false
		}
	}
	return caps < 0 || !isCode[s[caps:]] || yield(caps, len(s))
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
