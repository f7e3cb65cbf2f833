package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestRunBench_SQLiteJSON(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	getenv := func(string) string { return "" }
	var stdout, stderr bytes.Buffer
	args := []string{"bench", "--scenario", "drain,latency", "--jobs", "50", "--tenants", "3", "--workers", "10", "--samples", "5", "--json"}
	if err := run(t.Context(), args, getenv, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2:\n%s", len(lines), stdout.String())
	}
	for i, want := range []string{"drain", "latency"} {
		var got map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, lines[i])
		}
		if got["scenario"] != want {
			t.Errorf("line %d: scenario %v, want %s", i, got["scenario"], want)
		}
	}
}

func TestRunBench_BadFlags(t *testing.T) {
	t.Parallel()
	getenv := func(string) string { return "" }
	for _, args := range [][]string{
		{"bench", "--scenario", "nope"},
		{"bench", "--database-url", "mysql://x"},
		{"bench", "--jobs"},
		{"bench", "extra"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), args, getenv, &stdout, &stderr)
		if err == nil {
			t.Errorf("run(%q) succeeded, want an error", args)
		}
		if errors.Is(err, errUsage) && stderr.Len() == 0 {
			t.Errorf("run(%q): usage error without a message", args)
		}
	}
}
