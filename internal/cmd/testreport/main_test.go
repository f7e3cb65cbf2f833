package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const passing = `{"Time":"2026-12-06T10:00:00Z","Action":"pass","Package":"p","Test":"TestSlow","Elapsed":40}
{"Time":"2026-12-06T10:00:01Z","Action":"pass","Package":"p","Test":"TestFast","Elapsed":0.1}
{"Time":"2026-12-06T10:01:00Z","Action":"pass","Package":"p","Elapsed":60}
`

// writeFile writes s to a file in t's temporary directory and returns its path.
func writeFile(t *testing.T, name, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRun_WithinBudgetKeepsStream(t *testing.T) {
	t.Parallel()
	budgets := writeFile(t, "budgets", "default 2m\n")
	kept := filepath.Join(t.TempDir(), "race.json")
	var out strings.Builder
	if err := run([]string{"-budgets", budgets, "-json", kept}, strings.NewReader(passing), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if got, err := os.ReadFile(kept); err != nil || string(got) != passing {
		t.Errorf("kept stream %q (%v), want the input", got, err)
	}
	if !strings.Contains(out.String(), "ok   p 60.0s") {
		t.Errorf("no package line:\n%s", out.String())
	}
}

func TestRun_OverBudgetFails(t *testing.T) {
	t.Parallel()
	budgets := writeFile(t, "budgets", "default 2m\np 30s\n")
	err := run([]string{"-budgets", budgets}, strings.NewReader(passing), &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), "p took 60.0s, over its budget of 30s") {
		t.Errorf("run = %v, want p over its budget", err)
	}
}

func TestRun_FailedTestFails(t *testing.T) {
	t.Parallel()
	failing := `{"Action":"output","Package":"p","Test":"TestX","Output":"want 2\n"}
{"Action":"fail","Package":"p","Test":"TestX","Elapsed":1}
{"Action":"fail","Package":"p","Elapsed":1}
`
	var out strings.Builder
	err := run(nil, strings.NewReader(failing), &out)
	if err == nil || !strings.Contains(err.Error(), "1 tests failed") || !strings.Contains(err.Error(), "package p failed") {
		t.Errorf("run = %v, want a failed test and package", err)
	}
	if !strings.Contains(out.String(), "want 2") {
		t.Errorf("the failed test's output is not printed:\n%s", out.String())
	}
}

func TestRun_Summary(t *testing.T) {
	t.Parallel()
	a, b := writeFile(t, "a.json", passing), writeFile(t, "b.json", passing)
	var out strings.Builder
	if err := run([]string{"-summary", "-slowest", "1", a, b}, nil, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"4 tests passed, 0 failed, 0 skipped, in 2 packages; go test ran for 2m0s", "The 1 slowest tests:", "40.0s  p TestSlow"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
}
