// Package doccheck keeps the repository's documentation a handbook: a
// bounded docs/ directory of reference pages, no dated diary headings, and
// no citation of a document that is not in the repository.
//
// [Check] walks a checkout and reports every violation as a [Finding]; the
// package's test runs it on this repository, so `go test ./...` (and with
// it `make test`) fails on any of them. The rules:
//
//   - the Markdown files under docs/ hold at most [MaxDocsLines] lines in
//     all (the soak run's output under docs/soak/ aside);
//   - no Markdown heading (outside fenced code) names a date, a session or
//     a numbered round: history stays in git, not in the pages;
//   - no *.go, *.sql, *.md, *.sh file or Makefile cites an outside
//     document: a design or conventions document, a reliability plan, a
//     numbered section, issue, test or review round (see [citations]).
//     A rule is stated in its own words where it applies instead.
//
// Nested modules that are not this module's code, and the directories Git
// ignores for build output, are skipped. This package's own source holds
// the patterns and is skipped too.
package doccheck

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// MaxDocsLines is the most lines the Markdown files under docs/ may hold
// together.
const MaxDocsLines = 2000

// Module is the module path whose code the check covers; a nested module
// of another path (a copy of third-party code) is skipped.
const Module = "github.com/docketq/docket"

// A Finding is one violation: where, which rule, and the offending text.
type Finding struct {
	Path string // slash-separated, relative to the root
	Line int    // 1-based; 0 for a finding about a whole file or tree
	Rule string
	Text string
}

// String formats the finding as path:line: rule: text.
func (f Finding) String() string {
	if f.Line == 0 {
		return fmt.Sprintf("%s: %s: %s", f.Path, f.Rule, f.Text)
	}
	return fmt.Sprintf("%s:%d: %s: %s", f.Path, f.Line, f.Rule, f.Text)
}

// citations are the ways the code and the pages cited documents that are
// not in the repository. A line that also holds a URL (another project's
// issue tracker) is not a citation of this kind.
var citations = []struct {
	name string
	re   *regexp.Regexp
	// hints are literal strings of which a match holds one: a line
	// holding none is not searched (a regexp scan of every line for each
	// rule took seconds over the repository).
	hints []string
}{
	{"outside design document", regexp.MustCompile(`\bDESIGN\b`), []string{"DESIGN"}},
	{"outside reliability document", regexp.MustCompile(`\bRELIABILITY\b`), []string{"RELIABILITY"}},
	{"outside conventions document", regexp.MustCompile(`\bCONVENTIONS\b`), []string{"CONVENTIONS"}},
	{"outside reliability plan", regexp.MustCompile(`(?i)\breliability plan\b`), []string{"eliability", "ELIABILITY"}},
	{"numbered section", regexp.MustCompile(`§ ?[0-9]`), []string{"§"}},
	{"numbered issue", regexp.MustCompile(`\b[Ii]ssue #?[0-9]+`), []string{"ssue"}},
	{"numbered test of a plan", regexp.MustCompile(`\b(test|tests) [0-9]+\b`), []string{"test "}},
	{"numbered review", regexp.MustCompile(`(?i)\breview ?[0-9]+`), []string{"eview", "EVIEW"}},
}

var (
	// diaryHeading matches a heading that dates its section or names the
	// session or round it was written in.
	diaryHeading = regexp.MustCompile(`(?i)\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b|\bsession\b|\bsessions? [0-9]+\b|\bround [0-9]+\b|\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth) (session|round)\b`)
	fence        = regexp.MustCompile("^\\s*(```|~~~)")
)

// skipDirs are directory names never walked: Git's, build output and
// third-party trees.
var skipDirs = map[string]bool{".git": true, ".tmp": true, "bin": true, "docket-data": true, "node_modules": true, "vendor": true}

// generatedDocs holds what `make soak` writes (SOAK_OUT): a run's output,
// not pages, so it does not count towards [MaxDocsLines]. Its files are
// still checked for headings and citations.
const generatedDocs = "docs/soak/"

// selfDir is this package's directory, relative to the root: its source
// spells out the patterns.
const selfDir = "internal/doccheck"

// Check walks root, a checkout of [Module], and returns every violation,
// sorted by path and line.
func Check(root string) ([]Finding, error) {
	var out []Finding
	docsLines := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			if skipDirs[d.Name()] || rel == selfDir || foreignModule(path) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !checked(d.Name()) {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		isMD := strings.HasSuffix(d.Name(), ".md")
		if isMD && strings.HasPrefix(rel, "docs/") && !strings.HasPrefix(rel, generatedDocs) {
			docsLines += bytes.Count(data, []byte("\n"))
		}
		out = append(out, checkFile(rel, data, isMD)...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if docsLines > MaxDocsLines {
		out = append(out, Finding{Path: "docs", Rule: "docs too long",
			Text: fmt.Sprintf("%d lines of Markdown, at most %d: cut or merge pages", docsLines, MaxDocsLines)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Line < out[j].Line
	})
	return out, nil
}

// checked reports whether a file of this name is checked for citations.
func checked(name string) bool {
	if name == "Makefile" {
		return true
	}
	switch filepath.Ext(name) {
	case ".go", ".sql", ".md", ".sh":
		return true
	}
	return false
}

// foreignModule reports whether dir holds a go.mod of a module outside
// [Module].
func foreignModule(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return f[1] != Module && !strings.HasPrefix(f[1], Module+"/")
		}
	}
	return false
}

// checkFile returns the violations in one file's text.
func checkFile(rel string, data []byte, isMD bool) []Finding {
	var out []Finding
	inFence := false
	prev := "" // the end of the line before, for a citation split across two lines
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		joined, cut := joinLines(prev, line)
		prev = line
		if isMD {
			if fence.MatchString(line) {
				inFence = !inFence
			} else if !inFence && strings.HasPrefix(line, "#") && diaryHeading.MatchString(line) {
				out = append(out, Finding{Path: rel, Line: n, Rule: "dated diary heading", Text: strings.TrimSpace(line)})
			}
		}
		if strings.Contains(joined, "http://") || strings.Contains(joined, "https://") {
			continue
		}
		for _, c := range citations {
			if !containsAny(joined, c.hints) {
				continue
			}
			if m := citation(c.re, joined, cut); m != "" {
				out = append(out, Finding{Path: rel, Line: n, Rule: c.name + " (" + m + ")", Text: clip(strings.TrimSpace(line))})
				break
			}
		}
	}
	return out
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// joinLines returns the last words of prev, a space and line without its
// comment marker, and where line's part begins: a citation may be cut by
// a line break ("test" at the end of one comment line, "23" at the start of
// the next).
func joinLines(prev, line string) (string, int) {
	prev = strings.TrimRight(prev, " \t")
	if i := strings.LastIndexAny(prev, " \t"); i >= 0 {
		prev = prev[i+1:]
	}
	body := strings.TrimLeft(line, " \t")
	for _, marker := range []string{"//", "--", "#", "*"} {
		if strings.HasPrefix(body, marker) {
			body = strings.TrimLeft(body[len(marker):], " \t")
			break
		}
	}
	if prev == "" {
		return line, 0
	}
	return prev + " " + body, len(prev) + 1
}

// citation returns the first match of re in text that ends past from (in
// the current line) and is not a quantity ("tests 614 s", "tests 1,050"),
// or "".
func citation(re *regexp.Regexp, text string, from int) string {
	for _, loc := range re.FindAllStringIndex(text, -1) {
		if loc[1] > from && !quantity.MatchString(text[loc[1]:]) {
			return text[loc[0]:loc[1]]
		}
	}
	return ""
}

// quantity matches what follows a number that counts or measures rather
// than names.
var quantity = regexp.MustCompile(`^(,[0-9]|[0-9]*\.[0-9]| ?(s|ms|min|%|x|×)\b| (passed|failed|times)\b)`)

func clip(s string) string {
	const limit = 160
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "…"
}
