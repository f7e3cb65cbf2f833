package chunk

import (
	"strings"
	"testing"
)

// BenchmarkSplit reports throughput (MB/s) on about 1 MB of text in 100
// pages.
func BenchmarkSplit(b *testing.B) {
	prose := make([]Page, 100)
	cjk := make([]Page, 100)
	for i := range prose {
		prose[i] = Page{Number: i + 1, Text: sampleText(10_000)}
		cjk[i] = Page{Number: i + 1, Text: strings.Repeat("東京は日本の首都です。人口は約千四百万人です。", 150)}
	}
	for _, bb := range []struct {
		name  string
		pages []Page
		cfg   Config
	}{
		{"runes", prose, Config{}},
		{"words", prose, Config{Unit: Words}},
		{"cjk", cjk, Config{}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			n := 0
			for _, p := range bb.pages {
				n += len(p.Text)
			}
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Split(bb.pages, bb.cfg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
