package analyze

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkAnalyze reports throughput on about 1 MB of text in 100 pages,
// made of the testdata documents: dense with dates and amounts.
func BenchmarkAnalyze(b *testing.B) {
	paths, _ := filepath.Glob("testdata/*.txt")
	var all strings.Builder
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		all.Write(data)
	}
	page := strings.Repeat(all.String(), 10_000/all.Len()+1)
	in := make([]Page, 100)
	for i := range in {
		in[i] = Page{Number: i + 1, Text: page}
	}
	b.SetBytes(int64(len(in) * len(page)))
	b.ReportAllocs()
	for b.Loop() {
		Analyze(in, Options{})
	}
}
