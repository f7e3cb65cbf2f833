package doccheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepository runs the check on this checkout and lists every
// violation, one a line, with its file and line.
func TestRepository(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found at %s: %v", root, err)
	}
	found, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		var b strings.Builder
		for _, f := range found {
			b.WriteString("\n\t" + f.String())
		}
		t.Errorf("%d violations of the documentation rules (package doc of internal/doccheck):%s", len(found), b.String())
	}
}

// TestCheck checks the rules on a made-up tree: each kind of violation is
// found, and what is allowed passes.
func TestCheck(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The citations the check must find, spelled in pieces so that this
	// file itself cites nothing.
	design, reliability, issue, test := "DES"+"IGN", "RELIA"+"BILITY", "is"+"sue", "te"+"st"
	write("go.mod", "module "+Module+"\n")
	write("a.go", "package a\n\n// As the design says ("+design+" §3).\n// pgx issue #1234, https://github.com/jackc/pgx/issues/1234\nvar x = 1\n")
	write("b.sql", "-- Search ("+issue+" 11): full-text search.\n-- as the soak found (docs/reliability.md, "+test+"\n-- 24). Each\n")
	write("Makefile", "fuzz: ## every target ("+reliability+" 36)\n")
	write("c.sh", "# as "+test+" 24 of the plan found\n# tests 614 s; tests 1,050 s; 2 tests 3 passed\n")
	write("d_test.go", "package a\n\n// found in review14\n")
	write("docs/ok.md", "# Claiming\n\n```sh\n# 2026-11-30 in a code block is fine\n```\n")
	write("docs/diary.md", "# Benchmarks\n\n## Results, 2026-11-29\n\n### The fourth session\n\n## Round 3\n")
	write("docs/long.md", strings.Repeat("line\n", MaxDocsLines))
	write("docs/soak/summary.md", strings.Repeat("line\n", 100)) // generated: not counted
	write("third/go.mod", "module example.com/third\n")
	write("third/x.go", "// "+reliability+" 1\n")
	write("bin/y.go", "// "+reliability+" 1\n")
	found, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Makefile:1: outside reliability document",
		"a.go:3: outside design document",
		"b.sql:1: numbered issue",
		"b.sql:3: numbered test of a plan",
		"c.sh:1: numbered test of a plan",
		"d_test.go:3: numbered review",
		"docs: docs too long: 2012 lines",
		"docs/diary.md:3: dated diary heading",
		"docs/diary.md:5: dated diary heading",
		"docs/diary.md:7: dated diary heading",
	}
	if len(found) != len(want) {
		t.Errorf("found %d violations, want %d:", len(found), len(want))
	}
	for i, f := range found {
		if i >= len(want) || !strings.HasPrefix(f.String(), want[i]) {
			t.Errorf("finding %d: %s", i, f)
		}
	}
}
