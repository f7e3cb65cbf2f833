package analyze

import (
	"fmt"
	"regexp"
	"sort"
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

// datePatterns recognise dates; each has a function that reads its groups.
var datePatterns = []struct {
	yearFirst bool // the match starts with the year; otherwise it ends with it
	re        *regexp.Regexp
	read      func(g []string) (y, m, d int)
}{
	{ // 2024-03-15, 2024/03/15, 2024-03-15T10:00:00Z
		true, regexp.MustCompile(`^(\d{4})([-/.])(\d{1,2})([-/.])(\d{1,2})(?:T\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?`),
		func(g []string) (int, int, int) {
			if g[2] != g[4] {
				return 0, 0, 0
			}
			return atoi(g[1]), atoi(g[3]), atoi(g[5])
		},
	},
	{ // 15/03/2024, 15.03.2024, 15-03-2024: day first unless that is impossible
		false, regexp.MustCompile(`(\d{1,2})([-/.])(\d{1,2})([-/.])(\d{4})$`),
		func(g []string) (int, int, int) {
			a, b := atoi(g[1]), atoi(g[3])
			if g[2] != g[4] {
				return 0, 0, 0
			}
			if a <= 12 && b > 12 {
				a, b = b, a // month first, as in the US
			}
			return atoi(g[5]), b, a
		},
	},
	{ // 2024年3月15日
		true, regexp.MustCompile(`^(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日`),
		func(g []string) (int, int, int) { return atoi(g[1]), atoi(g[2]), atoi(g[3]) },
	},
	{ // March 15, 2024; Mar. 15th 2024
		false, regexp.MustCompile(monthWord + sp + dayPart + `,?` + sp + `(\d{4})$`),
		func(g []string) (int, int, int) { return atoi(g[3]), month(g[1]), atoi(g[2]) },
	},
	{ // 15 March 2024, 15. März 2024, 15 de marzo de 2024, 1er janvier 2024
		false, regexp.MustCompile(dayPart + `\.?` + sp + `(?:de` + sp + `)?` + monthWord + `,?` + sp + `(?:de` + sp + `|del` + sp + `)?(\d{4})$`),
		func(g []string) (int, int, int) { return atoi(g[3]), month(g[2]), atoi(g[1]) },
	},
}

// month returns the number of the month named name, or 0.
func month(name string) int {
	return monthNames[strings.ToLower(name)]
}

// match is a recognised piece of text.
type match[T any] struct {
	start, end int
	value      T
}

// dateReach is how far from its year a date may start or end, in bytes.
const dateReach = 48

// findDates returns the valid dates in s as YYYY-MM-DD, in order. Every
// date starts or ends with a year, so the patterns, anchored there, run
// only next to runs of four digits: cheap whatever the text.
func findDates(s string) []string {
	var found []match[string]
	for _, y := range yearRuns(s) {
		for _, p := range datePatterns {
			lo, hi := max(0, y[1]-dateReach), y[1]
			if p.yearFirst {
				lo, hi = y[0], min(len(s), y[0]+dateReach)
			}
			start, end, g, ok := matchIn(p.re, s, lo, hi)
			if !ok {
				continue
			}
			if date, ok := isoDate(p.read(g)); ok {
				found = append(found, match[string]{start, end, date})
			}
		}
	}
	return values(found)
}

// matchIn runs re on s[lo:hi] (edges moved forward to rune boundaries) and
// returns its match in s, if it is not glued to the text around it.
func matchIn(re *regexp.Regexp, s string, lo, hi int) (start, end int, g []string, ok bool) {
	lo, hi = runeCeil(s, lo), runeCeil(s, hi)
	loc := re.FindStringSubmatchIndex(s[lo:hi])
	if loc == nil || !standsAlone(s, lo+loc[0], lo+loc[1]) {
		return 0, 0, nil, false
	}
	return lo + loc[0], lo + loc[1], groups(s[lo:hi], loc), true
}

// runeCeil moves i forward to the start of a rune (at most UTFMax-1 bytes:
// invalid UTF-8 is taken as it comes).
func runeCeil(s string, i int) int {
	for k := 1; k < utf8.UTFMax && i < len(s) && !utf8.RuneStart(s[i]); k++ {
		i++
	}
	return i
}

// yearRuns returns the spans of the runs of four or more digits in s.
func yearRuns(s string) [][2]int {
	var out [][2]int
	run := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] >= '0' && s[i] <= '9' {
			run++
			continue
		}
		if run >= 4 {
			out = append(out, [2]int{i - run, i})
		}
		run = 0
	}
	return out
}

// isoDate formats a date if it exists and its year is between 1800 and 2199.
func isoDate(y, m, d int) (string, bool) {
	if y < 1800 || y > 2199 || m < 1 || m > 12 || d < 1 {
		return "", false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d {
		return "", false // 31 April and the like
	}
	return fmt.Sprintf("%04d-%02d-%02d", y, m, d), true
}

// values sorts matches by position, drops those that overlap an earlier
// (or, at the same start, longer) one, and returns their values.
func values[T any](found []match[T]) []T {
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

// standsAlone reports whether s[start:end] is not glued to a letter or
// digit on either side (CJK characters, written without spaces, do not
// count).
func standsAlone(s string, start, end int) bool {
	before, _ := utf8.DecodeLastRuneInString(s[:start])
	after, _ := utf8.DecodeRuneInString(s[end:])
	glued := func(r rune) bool { return unicode.IsLetter(r) && !isCJK(r) || unicode.IsDigit(r) }
	return (start == 0 || !glued(before)) && (end == len(s) || !glued(after))
}

// groups returns the submatches of loc ("" for those that did not match).
func groups(s string, loc []int) []string {
	g := make([]string, len(loc)/2)
	for i := range g {
		if loc[2*i] >= 0 {
			g[i] = s[loc[2*i]:loc[2*i+1]]
		}
	}
	return g
}

// atoi parses a short run of digits; anything else is 0.
func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	return n
}
