package extract_test

import (
	"testing"

	"github.com/docketq/docket/pipeline/extract"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"spaces", "  a \t b\u00a0\u00a0c  ", "a b c"},
		{"crlf", "a\r\nb\rc", "a\nb\nc"},
		{"paragraphs", "\n\na\n\n\n\nb\n\n", "a\n\nb"},
		{"whitespace-only lines", "a\n  \t \nb", "a\n\nb"},
		{"hyphenation", "exam-\nple", "example"},
		{"hyphenation with spaces", "an exam-  \n   ple here", "an example here"},
		{"hyphenation chain", "ex-\nam-\nple", "example"},
		{"no join before capital", "North-\nSouth", "North-\nSouth"},
		{"no join after digit", "2020-\n2021", "2020-\n2021"},
		{"no join across paragraph", "exam-\n\nple", "exam-\n\nple"},
		{"dash list", "items:\n- one\n- two", "items:\n- one\n- two"},
		{"pdfium hyphen", "exam\x02\nple", "example"},
		{"soft hyphen", "hy\u00adphen", "hyphen"},
		{"zero width", "a\u200bb\ufeffc", "abc"},
		{"controls", "a\x01b\x1bc\x7f", "abc"},
		{"nfkc ligature", "ﬁne ﬂow", "fine flow"},
		{"nfkc fullwidth", "ＡＢＣ１２３", "ABC123"},
		{"nfkc ideographic space", "a\u3000b", "a b"},
		{"combining", "cafe\u0301", "café"},
		{"form feed", "a\fb", "a\n\nb"},
		{"line separator", "a\u2028b\u2029c", "a\nb\n\nc"},
		{"invalid utf8", "a\xffb", "a\ufffdb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := extract.Normalize(tt.in)
			if got != tt.want {
				t.Fatalf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := extract.Normalize(got); again != got {
				t.Fatalf("not idempotent: %q → %q", got, again)
			}
		})
	}
}

func TestReason(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{extract.ErrUnsupported, "unsupported_type"},
		{extract.ErrEmpty, "unsupported_type"},
		{extract.ErrMalformed, "malformed"},
		{extract.ErrEncrypted, "encrypted"},
		{extract.ErrTooLarge, "too_large"},
		{extract.ErrTimeout, "timeout"},
	}
	for _, tt := range tests {
		if got := extract.Reason(tt.err); got != tt.want {
			t.Errorf("Reason(%v) = %q, want %q", tt.err, got, tt.want)
		}
		if extract.Permanent(tt.err) != (tt.want != "") {
			t.Errorf("Permanent(%v) wrong", tt.err)
		}
	}
}
