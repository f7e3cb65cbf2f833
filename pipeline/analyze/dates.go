package analyze

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// monthNames maps month names and abbreviations (lower case, in en, de,
// fr, es, it, nl, pt) to month numbers.
var monthNames = func() map[string]int {
	lists := [12]string{
		"january jan januar jänner jän janvier janv enero ene gennaio gen januari janeiro",
		"february feb februar février fevrier févr fevr febrero febbraio februari fevereiro fev",
		"march mar märz mrz mär mars marzo maart março marco",
		"april apr avril avr abril aprile abr",
		"may mai mayo maggio mei maio",
		"june jun juni juin junio giugno junho",
		"july jul juli juillet juil julio luglio julho",
		"august aug août aout agosto augustus ago",
		"september sep sept septembre septiembre setiembre settembre setembro set",
		"october oct oktober okt octobre octubre ottobre ott oktober outubro out",
		"november nov novembre noviembre novembro",
		"december dec dezember dez décembre déc diciembre dic dicembre dezembro",
	}
	m := map[string]int{}
	for i, names := range lists {
		for _, n := range strings.Fields(names) {
			m[n] = i + 1
		}
	}
	return m
}()

// monthWord matches a word that may be a month name; monthNames decides.
// (An alternation of all the names would make a large, slow program.)
const monthWord = `(\p{L}{3,10})\.?`

const (
	sp      = `[\s\x{00A0}\x{202F}]+`             // spaces, no-break ones included
	dayPart = `([0-3]?\d)(?:st|nd|rd|th|er|º|°)?` // 15, 15th, 1er, 1º
)

// datePattern recognises dates of one form. A year-first pattern is
// anchored at the year's start; a year-last one at both ends: it is tried
// at the possible starts before the year, leftmost first.
type datePattern struct {
	yearFirst bool
	re        *regexp.Regexp
	read      func(g submatches) (y, m, d int)
	// near reports a condition the text next to the year at s[y0:y1] meets
	// when the pattern matches there: quick, and enough to skip most years.
	near func(s string, y0, y1 int) bool
	// runs is how many runs of letters and digits a year-last match can
	// hold before its year; first reports whether one can start at s[i:].
	runs  int
	first func(s string, i int) bool
}

// datePatterns recognise dates.
var datePatterns = []datePattern{
	{ // 2024-03-15, 2024/03/15, 2024-03-15T10:00:00Z
		yearFirst: true,
		re:        regexp.MustCompile(`^(\d{4})([-/.])(\d{1,2})([-/.])(\d{1,2})(?:T\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?`),
		read: func(g submatches) (int, int, int) {
			if g.at(2) != g.at(4) {
				return 0, 0, 0
			}
			return atoi(g.at(1)), atoi(g.at(3)), atoi(g.at(5))
		},
		near: func(s string, _, y1 int) bool { return y1 < len(s) && strings.IndexByte("-/.", s[y1]) >= 0 },
	},
	{ // 15/03/2024, 15.03.2024, 15-03-2024: day first unless that is impossible
		re: regexp.MustCompile(`^(\d{1,2})([-/.])(\d{1,2})([-/.])(\d{4})$`),
		read: func(g submatches) (int, int, int) {
			a, b := atoi(g.at(1)), atoi(g.at(3))
			if g.at(2) != g.at(4) {
				return 0, 0, 0
			}
			if a <= 12 && b > 12 {
				a, b = b, a // month first, as in the US
			}
			return atoi(g.at(5)), b, a
		},
		near:  func(s string, y0, _ int) bool { return y0 > 0 && strings.IndexByte("-/.", s[y0-1]) >= 0 },
		runs:  2,
		first: startsDay,
	},
	{ // 2024年3月15日
		yearFirst: true,
		re:        regexp.MustCompile(`^(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日`),
		read:      func(g submatches) (int, int, int) { return atoi(g.at(1)), atoi(g.at(2)), atoi(g.at(3)) },
		near: func(s string, _, y1 int) bool {
			return strings.HasPrefix(strings.TrimLeft(s[y1:min(len(s), y1+dateReach)], " \t\n\f\r"), "年")
		},
	},
	{ // March 15, 2024; Mar. 15th 2024
		re:    regexp.MustCompile(`^` + monthWord + sp + dayPart + `,?` + sp + `(\d{4})$`),
		read:  func(g submatches) (int, int, int) { return atoi(g.at(3)), month(g.at(1)), atoi(g.at(2)) },
		near:  spaceBefore,
		runs:  2, // the month, the day
		first: startsMonth,
	},
	{ // 15 March 2024, 15. März 2024, 15 de marzo de 2024, 1er janvier 2024
		re:    regexp.MustCompile(`^` + dayPart + `\.?` + sp + `(?:de` + sp + `)?` + monthWord + `,?` + sp + `(?:de` + sp + `|del` + sp + `)?(\d{4})$`),
		read:  func(g submatches) (int, int, int) { return atoi(g.at(3)), month(g.at(2)), atoi(g.at(1)) },
		near:  spaceBefore,
		runs:  4, // the day, "de", the month, "de"
		first: startsDay,
	},
}

// spaceBefore reports whether the year at s[y0:] follows a space.
func spaceBefore(s string, y0, _ int) bool {
	r, _ := utf8.DecodeLastRuneInString(s[:y0])
	return unicode.IsSpace(r) || r == '\u00a0' || r == '\u202f'
}

// startsDay reports whether s[i:] starts with one or two digits, no more.
func startsDay(s string, i int) bool {
	d := digitsAt(s, i)
	return d > 0 && d <= 2
}

// startsMonth reports whether s[i:] starts with 3 to 10 letters, no more.
func startsMonth(s string, i int) bool {
	n := 0
	for _, r := range s[i:] {
		if !unicode.IsLetter(r) || n > 10 {
			break
		}
		n++
	}
	return n >= 3 && n <= 10
}

// find returns the pattern's match around the year at s[y0:y1], if it is
// not glued to the text around it.
func (p *datePattern) find(s string, y0, y1 int) (start, end int, g submatches, ok bool) {
	if !p.near(s, y0, y1) {
		return 0, 0, submatches{}, false
	}
	if p.yearFirst {
		return matchIn(p.re, s, y0, min(len(s), y0+dateReach))
	}
	// The match holds at most p.runs runs of letters and digits before the
	// year, each whole but the first, and at most dateReach bytes.
	lo := runeCeil(s, max(0, y1-dateReach))
	for i := runsBack(s, lo, y0, p.runs); i < y0; {
		_, w := utf8.DecodeRuneInString(s[i:])
		if p.first(s, i) {
			if loc := p.re.FindStringSubmatchIndex(s[i:y1]); loc != nil {
				if !standsAlone(s, i, y1) {
					return 0, 0, submatches{}, false
				}
				return i, y1, submatches{s[i:y1], loc}, true
			}
		}
		i += w
	}
	return 0, 0, submatches{}, false
}

// runsBack returns the start of the k-th run of letters and digits that
// ends before end, or lo if there are fewer after lo.
func runsBack(s string, lo, end, k int) int {
	in := false
	for i := end; i > lo; {
		r, w := utf8.DecodeLastRuneInString(s[lo:i])
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		if in && !alnum && k == 0 {
			return i
		}
		if alnum && !in {
			k--
		}
		in = alnum
		i -= w
	}
	return lo
}

// month returns the number of the month named name, or 0.
func month(name string) int {
	return monthNames[strings.ToLower(name)]
}

// dateReach is how far from its year a date may start or end, in bytes.
const dateReach = 48

// findDates returns the valid dates in s as YYYY-MM-DD, in order.
func findDates(s string) []string {
	var out []string
	scanDates(s, nil, func(day int) bool { out = append(out, isoDate(day)); return true })
	return out
}

// scanDates passes the valid dates in s to yield as YYYYMMDD, in order,
// until yield returns false or st stops. Every date starts or ends with a
// year, so the patterns, anchored there, run only next to runs of four
// digits, each within dateReach bytes: linear in the text.
func scanDates(s string, st *stopper, yield func(int) bool) {
	p := picker[int]{yield: yield}
	ok := eachYear(s, st, func(y0, y1 int) bool {
		if !p.flush(y0 - dateReach - utf8.UTFMax) {
			return false
		}
		for i := range datePatterns {
			pat := &datePatterns[i]
			if start, end, g, ok := pat.find(s, y0, y1); ok {
				if day, ok := dayOf(pat.read(g)); ok {
					p.add(match[int]{start, end, day})
				}
			}
		}
		return true
	})
	if ok {
		p.flush(len(s) + 1)
	}
}

// matchIn runs re on s[lo:hi] (edges moved forward to rune boundaries) and
// returns its match in s, if it is not glued to the text around it.
func matchIn(re *regexp.Regexp, s string, lo, hi int) (start, end int, g submatches, ok bool) {
	lo, hi = runeCeil(s, lo), runeCeil(s, hi)
	loc := re.FindStringSubmatchIndex(s[lo:hi])
	if loc == nil || !standsAlone(s, lo+loc[0], lo+loc[1]) {
		return 0, 0, submatches{}, false
	}
	return lo + loc[0], lo + loc[1], submatches{s[lo:hi], loc}, true
}

// runeCeil moves i forward to the start of a rune (at most UTFMax-1 bytes:
// invalid UTF-8 is taken as it comes).
func runeCeil(s string, i int) int {
	for k := 1; k < utf8.UTFMax && i < len(s) && !utf8.RuneStart(s[i]); k++ {
		i++
	}
	return i
}

// eachYear calls yield with the span of each run of exactly four digits
// in s (no pattern takes a longer one), in order, until yield returns
// false or st stops; it reports whether it read s to its end.
func eachYear(s string, st *stopper, yield func(y0, y1 int) bool) bool {
	run := 0
	for i := 0; i <= len(s); i++ {
		if st.stop() {
			return false
		}
		if i < len(s) && s[i] >= '0' && s[i] <= '9' {
			run++
			continue
		}
		if run == 4 && !yield(i-4, i) {
			return false
		}
		run = 0
	}
	return true
}

// dayOf returns a date as YYYYMMDD if it exists and its year is between
// 1800 and 2199.
func dayOf(y, m, d int) (int, bool) {
	if y < 1800 || y > 2199 || m < 1 || m > 12 || d < 1 {
		return 0, false
	}
	if time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Day() != d {
		return 0, false // 31 April and the like
	}
	return y*10000 + m*100 + d, true
}

// isoDate formats a YYYYMMDD date as YYYY-MM-DD.
func isoDate(day int) string {
	return fmt.Sprintf("%04d-%02d-%02d", day/10000, day/100%100, day%100)
}

// standsAlone reports whether s[start:end] is not glued to a letter or
// digit on either side (CJK characters, written without spaces, do not
// count).
func standsAlone(s string, start, end int) bool {
	before, _ := utf8.DecodeLastRuneInString(s[:start])
	after, _ := utf8.DecodeRuneInString(s[end:])
	glued := func(r rune) bool { return unicode.IsLetter(r) && !isCJK(r) || unicode.IsDigit(r) }
	return (start == 0 || !glued(before)) && (end == len(s) || !glued(after))
}

// submatches are a match's groups in s, as regexp gives their indexes.
type submatches struct {
	s   string
	loc []int
}

// at returns group i, "" if it did not match.
func (g submatches) at(i int) string {
	if g.loc[2*i] < 0 {
		return ""
	}
	return g.s[g.loc[2*i]:g.loc[2*i+1]]
}

// atoi parses a short run of digits; anything else is 0.
func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	return n
}
