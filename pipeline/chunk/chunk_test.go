package chunk

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

func pages(texts ...string) []Page {
	out := make([]Page, len(texts))
	for i, t := range texts {
		out[i] = Page{Number: i + 1, Text: t}
	}
	return out
}

// splitTests are inputs whose exact chunks are known.
var splitTests = []struct {
	name  string
	pages []Page
	cfg   Config
	want  []Chunk
}{
	{"no pages", nil, Config{}, []Chunk{}},
	{"empty pages", pages("", " \n\t ", "\u200b"), Config{}, []Chunk{}},
	{"one short page", pages("  Hello, world.  \n"), Config{},
		[]Chunk{{0, "Hello, world.", 1, 1}}},
	{
		"sentence then paragraph breaks, with overlap",
		pages("The quick brown fox jumps over the lazy dog. It was not amused. The dog slept on.\n\n" +
			"A second paragraph begins here. It has two sentences."),
		Config{Size: 60, Overlap: 20},
		[]Chunk{
			{0, "The quick brown fox jumps over the lazy dog.", 1, 1},
			{1, "over the lazy dog. It was not amused. The dog slept on.", 1, 1},
			{2, "The dog slept on.\n\nA second paragraph begins here.", 1, 1},
			{3, "begins here. It has two sentences.", 1, 1},
		},
	},
	{
		"paragraphs without overlap",
		pages("First paragraph, quite short.\n\nSecond paragraph is a little longer than that.\n\nThird."),
		Config{Size: 50, Overlap: -1},
		[]Chunk{
			{0, "First paragraph, quite short.", 1, 1},
			{1, "Second paragraph is a little longer than that.", 1, 1},
			{2, "Third.", 1, 1},
		},
	},
	{
		"abbreviation is not a sentence end",
		pages("Use tools, e.g. hammers and saws. Then rest."),
		Config{Size: 40, Overlap: -1},
		[]Chunk{{0, "Use tools, e.g. hammers and saws.", 1, 1}, {1, "Then rest.", 1, 1}},
	},
	{
		"chunk spanning pages, empty page skipped",
		pages("Alpha beta.", "", "Gamma delta."),
		Config{},
		[]Chunk{{0, "Alpha beta.\n\nGamma delta.", 1, 3}},
	},
	{
		"page break is a paragraph break",
		pages("Alpha beta gamma delta.", "Epsilon zeta eta theta."),
		Config{Size: 30, Overlap: -1},
		[]Chunk{{0, "Alpha beta gamma delta.", 1, 1}, {1, "Epsilon zeta eta theta.", 2, 2}},
	},
	{
		"words",
		pages("one two three four five six seven eight nine ten eleven twelve"),
		Config{Unit: Words, Size: 5, Overlap: 2},
		[]Chunk{
			{0, "one two three four five", 1, 1},
			{1, "four five six seven eight", 1, 1},
			{2, "seven eight nine ten eleven", 1, 1},
			{3, "ten eleven twelve", 1, 1},
		},
	},
	{
		"CJK without spaces breaks after 。",
		pages("我爱北京天安门。天安门上太阳升。"),
		Config{Size: 10, Overlap: -1},
		[]Chunk{{0, "我爱北京天安门。", 1, 1}, {1, "天安门上太阳升。", 1, 1}},
	},
	{
		"CJK words count one character each",
		pages("東京は日本の首都です。"),
		Config{Unit: Words, Size: 4, Overlap: -1},
		[]Chunk{{0, "東京は日", 1, 1}, {1, "本の首都", 1, 1}, {2, "です。", 1, 1}},
	},
	{
		"combining marks stay with their letter",
		pages(strings.Repeat("e\u0301", 5)),
		Config{Size: 5, Overlap: -1},
		[]Chunk{{0, "e\u0301e\u0301", 1, 1}, {1, "e\u0301e\u0301", 1, 1}, {2, "e\u0301", 1, 1}},
	},
	{
		"one huge word is cut to size",
		pages(strings.Repeat("x", 25)),
		Config{Size: 10, Overlap: 3},
		[]Chunk{
			{0, strings.Repeat("x", 10), 1, 1},
			{1, strings.Repeat("x", 10), 1, 1},
			{2, strings.Repeat("x", 5), 1, 1},
		},
	},
	{
		"in words, a huge word counts one word per 32 runes",
		pages("a " + strings.Repeat("z", 100)),
		Config{Unit: Words, Size: 3, Overlap: -1},
		[]Chunk{{0, "a", 1, 1}, {1, strings.Repeat("z", 96), 1, 1}, {2, "zzzz", 1, 1}},
	},
	{
		"huge word between small ones keeps them whole",
		pages("ab " + strings.Repeat("y", 12) + " cd"),
		Config{Size: 8, Overlap: -1},
		[]Chunk{
			{0, "ab", 1, 1},
			{1, strings.Repeat("y", 8), 1, 1},
			{2, strings.Repeat("y", 4) + " cd", 1, 1},
		},
	},
}

func TestSplit(t *testing.T) {
	t.Parallel()
	for _, tt := range splitTests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := checkSplit(t, tt.pages, tt.cfg)
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n%+q\nwant\n%+q", texts(got), texts(tt.want))
			}
		})
	}
}

func TestSplit_config(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		msg  string // "" for valid
	}{
		{"zero value", Config{}, ""},
		{"overlap equal to size", Config{Size: 100, Overlap: 100}, "overlap 100 must be less than size 100 runes"},
		{"overlap above size", Config{Unit: Words, Size: 10, Overlap: 50}, "overlap 50 must be less than size 10 words"},
		{"default size, overlap too big", Config{Overlap: 800}, "overlap 800 must be less than size 800 runes"},
		{"negative size", Config{Size: -1}, "size -1 is negative"},
		{"unknown unit", Config{Unit: 7}, "unknown unit 7"},
		{"no overlap", Config{Size: 1, Overlap: -5}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Split(pages("some text"), tt.cfg)
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("Split: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want ErrConfig with %q", err, tt.msg)
			}
		})
	}
}

func TestSplit_defaults(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		unit          Unit
		size, overlap int
	}{{Runes, 800, 120}, {Words, 200, 30}} {
		cfg, err := Config{Unit: tt.unit}.withDefaults()
		if err != nil || cfg.Size != tt.size || cfg.Overlap != tt.overlap {
			t.Errorf("%s defaults: size %d overlap %d err %v, want %d %d", tt.unit, cfg.Size, cfg.Overlap, err, tt.size, tt.overlap)
		}
	}
}

// TestSplit_wordBoundaries checks on a long ordinary text that every chunk
// starts and ends on a word boundary, fills at least half its size, and
// overlaps the previous one.
func TestSplit_wordBoundaries(t *testing.T) {
	t.Parallel()
	text := sampleText(20_000)
	for _, cfg := range []Config{{}, {Size: 300, Overlap: 50}, {Unit: Words, Size: 50, Overlap: 10}} {
		chunks := checkSplit(t, pages(text), cfg)
		for i, c := range chunks {
			at := strings.Index(text, c.Text)
			if at < 0 {
				t.Fatalf("chunk %d is not a piece of the text", i)
			}
			if at > 0 && !isSpace(rune(text[at-1])) || at+len(c.Text) < len(text) && !isSpace(rune(text[at+len(c.Text)])) {
				t.Fatalf("chunk %d cuts a word: %q", i, c.Text)
			}
			full, _ := cfg.withDefaults()
			if n := units(c.Text, cfg.Unit); i < len(chunks)-1 && 2*n < full.Size {
				t.Errorf("chunk %d has %d %s, less than half of %d", i, n, cfg.Unit, full.Size)
			}
		}
	}
}

func units(s string, u Unit) int {
	if u == Words {
		return len(strings.Fields(s))
	}
	return utf8.RuneCountInString(s)
}

func TestSplit_progress(t *testing.T) {
	t.Parallel()
	var calls [][2]int
	cfg := Config{Size: 100, Progress: func(done, total int) { calls = append(calls, [2]int{done, total}) }}
	chunks, err := Split(pages(sampleText(1000), sampleText(500)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != len(chunks) {
		t.Fatalf("%d progress calls for %d chunks", len(calls), len(chunks))
	}
	for i, c := range calls {
		if c[0] > c[1] || i > 0 && c[0] < calls[i-1][0] {
			t.Fatalf("progress %v after %v", c, calls[max(0, i-1)])
		}
	}
	if last := calls[len(calls)-1]; last[0] != last[1] {
		t.Fatalf("last progress %v, want done == total", last)
	}
}

func TestSplit_deterministic(t *testing.T) {
	t.Parallel()
	in := pages(sampleText(5000), "中文文本。"+sampleText(3000))
	a, _ := Split(in, Config{Size: 200})
	b, _ := Split(in, Config{Size: 200})
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two splits of the same input differ")
	}
}

// sampleText returns about n bytes of English-like prose, the same every time.
func sampleText(n int) string {
	words := strings.Fields("the invoice lists amounts due by march and the customer pays within thirty days " +
		"while late payments accrue interest at the agreed rate of the contract signed by both parties")
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		w := words[(i*7+i/3)%len(words)]
		if i%11 == 0 {
			w = string(unicode.ToUpper(rune(w[0]))) + w[1:]
		}
		b.WriteString(w)
		switch {
		case i%97 == 96:
			b.WriteString(".\n\n")
		case i%13 == 12:
			b.WriteString(". ")
		default:
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func texts(cs []Chunk) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = fmt.Sprintf("%d p%d-%d %q", c.Index, c.PageStart, c.PageEnd, c.Text)
	}
	return out
}

// TestSplit_memory: Split holds a window of words, not the whole text
// cut into words: what it allocates for a long page is its chunks and
// little more (cutting 8 MiB into words at once took some 40 MiB).
func TestSplit_memory(t *testing.T) {
	text := sampleText(8 << 20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	chunks, err := Split([]Page{{Number: 1, Text: text}}, Config{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	perChunk := uint64(unsafe.Sizeof(Chunk{}))
	if got, bound := after.TotalAlloc-before.TotalAlloc, 3*perChunk*uint64(cap(chunks))+1<<20; got > bound {
		t.Errorf("Split allocated %d KiB for %d chunks, want at most %d KiB", got>>10, len(chunks), bound>>10)
	}
}
