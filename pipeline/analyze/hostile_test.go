package analyze

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docketq/docket/internal/race"
)

// hostile builds texts of about n bytes that once made a pass slow or
// memory-hungry: floods of currency signs, of dates and of near-dates, a
// single word, many distinct phrases, stop words, lines.
var hostile = []struct {
	name string
	text func(n int) string
}{
	{"dollars", func(n int) string { return strings.Repeat("$1 ", n/3) }},
	{"codes", func(n int) string { return strings.Repeat("1 EUR ", n/6) }},
	{"grouped", func(n int) string { return strings.Repeat("1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1 $", n/42) }},
	{"slash dates", func(n int) string { return strings.Repeat("1/1/1 ", n/6) }},
	{"numeric dates", func(n int) string { return strings.Repeat("1/1/2024 ", n/9) }},
	{"month dates", func(n int) string { return strings.Repeat("15 March 2024 ", n/14) }},
	{"near dates", func(n int) string { return strings.Repeat("Marchxx 99, 2024 ", n/17) }},
	{"one word", func(n int) string { return strings.Repeat("a", n) }},
	{"distinct phrases", distinctPhrases},
	{"stop words", func(n int) string { return strings.Repeat("the der le la el ", n/17) }},
	{"lines", func(n int) string { return strings.Repeat("x\n", n/2) }},
	{"spaces", func(n int) string { return strings.Repeat(" ", n) + "Title" }},
}

// distinctPhrases returns about n bytes of distinct words between stop words.
func distinctPhrases(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteByte('q')
		for k := i; ; k /= 26 {
			b.WriteByte(byte('a' + k%26))
			if k < 26 {
				break
			}
		}
		b.WriteString(" the ")
	}
	return b.String()
}

// allocated returns the bytes allocated while analyzing text.
func allocated(text string) uint64 {
	pages := []Page{{1, text}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	Analyze(pages, Options{})
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Hostile text costs memory linear in its size, and, but for the table of
// key phrases (bounded on its own), a few bytes per byte of text at most:
// no pass keeps all its matches or copies its lines. Not parallel: the
// counts are the process's.
func TestAnalyze_hostileAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector's allocations would be counted; scripts/test.sh runs this test without -race")
	}
	const small, large, perByte = 128 << 10, 512 << 10, 16
	for _, h := range hostile {
		a, b := allocated(h.text(small)), allocated(h.text(large))
		if b > 5*a+64<<10 || h.name != "distinct phrases" && b > perByte*large {
			t.Errorf("%s: %d bytes allocated for %d bytes of text, %d for %d", h.name, a, small, b, large)
		}
	}
}

// countdown is a context whose Err reports Canceled from its n-th call on.
type countdown struct {
	context.Context
	calls, n atomic.Int64
}

func (c *countdown) Err() error {
	if c.calls.Add(1) >= c.n.Load() {
		return context.Canceled
	}
	return nil
}

// AnalyzeContext looks at its context while it reads, not only before and
// after: a context done during a long page stops it with the context's error.
func TestAnalyzeContext_canceled(t *testing.T) {
	t.Parallel()
	pages := []Page{{1, strings.Repeat("Paid $1 on 15 March 2024 to the harbour master. ", 1<<13)}}
	for _, analyze := range []func(context.Context) error{
		func(ctx context.Context) error { _, err := AnalyzeContext(ctx, pages, Options{}); return err },
		func(ctx context.Context) error { _, err := OverviewContext(ctx, pages, Options{}); return err },
	} {
		ctx := &countdown{Context: context.Background()}
		ctx.n.Store(3)
		if err := analyze(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("err %v after %d looks at the context, want context.Canceled", err, ctx.calls.Load())
		}
	}
	f, err := AnalyzeContext(context.Background(), pages[:1:1], Options{MaxItems: 1})
	if err != nil || len(f.Dates) != 1 || len(f.Amounts) != 1 {
		t.Fatalf("fields %+v, err %v", f, err)
	}
}

// BenchmarkAnalyze_hostile reports throughput on 2 MiB of each hostile text.
func BenchmarkAnalyze_hostile(b *testing.B) {
	for _, h := range hostile {
		b.Run(strings.ReplaceAll(h.name, " ", "_"), func(b *testing.B) {
			pages := []Page{{1, h.text(2 << 20)}}
			b.SetBytes(int64(len(pages[0].Text)))
			b.ReportAllocs()
			for b.Loop() {
				Analyze(pages, Options{})
			}
		})
	}
}
