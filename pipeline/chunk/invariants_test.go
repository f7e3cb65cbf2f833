package chunk

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// checkSplit splits pages with cfg and checks what must hold for any input:
// chunks cover every atom in order, move forward, fit in Size, overlap at
// most Overlap, and carry text and pages that match their atoms.
func checkSplit(t *testing.T, pages []Page, cfg Config) []Chunk {
	t.Helper()
	chunks, err := Split(pages, cfg)
	if err != nil {
		t.Fatalf("Split: %v", err)
	}
	cfg, _ = cfg.withDefaults()
	d := scan(pages, cfg)
	spans := d.spans(cfg)
	if len(spans) != len(chunks) {
		t.Fatalf("%d spans, %d chunks", len(spans), len(chunks))
	}
	if len(d.atoms) == 0 {
		if len(chunks) != 0 {
			t.Fatalf("no words but %d chunks", len(chunks))
		}
		return chunks
	}
	if spans[0].first != 0 || spans[len(spans)-1].last != len(d.atoms)-1 {
		t.Fatalf("spans %v do not cover atoms 0..%d", spans, len(d.atoms)-1)
	}
	for i, s := range spans {
		c := chunks[i]
		checkChunk(t, d, cfg, c, s, i)
		if c.PageStart != pages[d.atoms[s.first].page].Number || c.PageEnd != pages[d.atoms[s.last].page].Number {
			t.Fatalf("chunk %d pages %d-%d, want those of its first and last words", i, c.PageStart, c.PageEnd)
		}
		if i == 0 {
			continue
		}
		p := spans[i-1]
		if s.first <= p.first || s.first > p.last+1 || s.last <= p.last {
			t.Fatalf("span %d %v does not follow %v", i, s, p)
		}
		if o := d.size(s.first, p.last); o > cfg.Overlap {
			t.Fatalf("chunk %d overlaps %d > %d", i, o, cfg.Overlap)
		}
	}
	return chunks
}

func checkChunk(t *testing.T, d *doc, cfg Config, c Chunk, s span, i int) {
	t.Helper()
	if c.Index != i {
		t.Fatalf("chunk %d has Index %d", i, c.Index)
	}
	if c.Text == "" || strings.TrimFunc(c.Text, isSpace) != c.Text {
		t.Fatalf("chunk %d text %q is empty or not trimmed", i, c.Text)
	}
	if sz := d.size(s.first, s.last); sz > cfg.Size {
		t.Fatalf("chunk %d is %d %s > %d", i, sz, cfg.Unit, cfg.Size)
	}
	if cfg.Unit == Runes && utf8.RuneCountInString(c.Text) > cfg.Size {
		t.Fatalf("chunk %d has %d runes > %d", i, utf8.RuneCountInString(c.Text), cfg.Size)
	}
}

func FuzzSplit(f *testing.F) {
	seeds := []string{
		"", " ", "\n\n\n", "word", "Hello world. This is a test.\n\nNew paragraph!",
		"我爱北京天安门。天安门上太阳升。", "e\u0301e\u0301e\u0301e\u0301e\u0301", "\xff\xfe invalid \xc3",
		strings.Repeat("x", 300), "a\fb\u2029c\u200bd", "e.g. this. And That?' “Yes.” ok",
	}
	for _, s := range seeds {
		f.Add(s, uint8(7), uint8(2), false)
	}
	f.Add("one two three four five six", uint8(3), uint8(1), true)
	f.Fuzz(func(t *testing.T, text string, size, overlap uint8, words bool) {
		cfg := Config{Size: int(size%64) + 1, Overlap: int(overlap % 64)}
		if cfg.Overlap >= cfg.Size {
			cfg.Overlap = -1
		}
		if words {
			cfg.Unit = Words
		}
		// Cut the text into pages at form feeds, numbered from 1.
		var pages []Page
		for i, p := range strings.Split(text, "\f") {
			pages = append(pages, Page{Number: i + 1, Text: p})
		}
		checkSplit(t, pages, cfg)
	})
}
