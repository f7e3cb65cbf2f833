package analyze

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// readPages reads a testdata text whose pages are separated by form feeds.
func readPages(t *testing.T, path string) []Page {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pages []Page
	for i, text := range strings.Split(string(data), "\f") {
		pages = append(pages, Page{Number: i + 1, Text: text})
	}
	return pages
}

// TestAnalyze_golden analyzes each testdata/*.txt and compares the fields
// with testdata/*.golden.json; -update rewrites those.
func TestAnalyze_golden(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".txt")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := json.MarshalIndent(Analyze(readPages(t, path), Options{}), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := strings.TrimSuffix(path, ".txt") + ".golden.json"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("fields differ from %s (go test -update rewrites it):\n%s", golden, got)
			}
		})
	}
}
