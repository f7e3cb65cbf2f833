package httpapi

import (
	"regexp"
	"strings"
	"testing"
)

var displayNameRE = regexp.MustCompile(`^[A-Za-z0-9._ -]{1,255}$`)

// checkDisplayName checks the sanitising policy's invariants.
func checkDisplayName(tb testing.TB, in, out string) {
	tb.Helper()
	if !displayNameRE.MatchString(out) || out == "." || out == ".." ||
		strings.ContainsAny(out, `/\`) || strings.HasPrefix(out, ".") || strings.HasSuffix(out, " ") {
		tb.Errorf("sanitizeFilename(%q) = %q", in, out)
	}
}

func TestSanitizeFilename(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"report.pdf":               "report.pdf",
		"../../../app/config.yaml": "config.yaml",
		`..\..\x`:                  "x",
		"/abs":                     "abs",
		`C:\x`:                     "x",
		"%2e%2e%2f":                "_2e_2e_2f",
		"a.pdf\x00.exe":            "a.pdf_.exe",
		"evil\u202etxt.pdf":        "evil_txt.pdf",
		"":                         fallbackFilename,
		".":                        fallbackFilename,
		"..":                       fallbackFilename,
		"dir/":                     fallbackFilename,
		"\u202e":                   fallbackFilename,
		"CON":                      "CON",
		"trailing. ":               "trailing",
		" .hidden":                 "hidden",
		"Résumé 2024.docx":         "R_sum_ 2024.docx",
		strings.Repeat("n", 1000):  strings.Repeat("n", 255),
	}
	for in, want := range cases {
		if got := sanitizeFilename(in); got != want {
			t.Errorf("sanitizeFilename(%q) = %q, want %q", in, got, want)
		}
		checkDisplayName(t, in, sanitizeFilename(in))
	}
}

func FuzzSanitizeFilename(f *testing.F) {
	for _, s := range []string{"a.pdf", "../x", `..\..\x`, "\x00", "\u202e.pdf", strings.Repeat("é", 300), ". .", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := sanitizeFilename(s)
		checkDisplayName(t, s, out)
		if sanitizeFilename(out) != out {
			t.Errorf("not idempotent: %q -> %q -> %q", s, out, sanitizeFilename(out))
		}
	})
}
