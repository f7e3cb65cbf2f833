package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/internal/race"
	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

func TestMain(m *testing.M) {
	Main()
	// These tests are of the child too: run this binary (built with -race
	// when the tests are), not the prebuilt one the test command names.
	_ = os.Unsetenv(EnvPath)
	os.Exit(m.Run())
}

func newPool(t *testing.T, cfg Config) *Pool {
	t.Helper()
	if cfg.WatchInterval == 0 {
		cfg.WatchInterval = 10 * time.Millisecond
	}
	p, err := NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func run(t *testing.T, p *Pool, ctx context.Context, typ extract.Type, data []byte) (*Result, error) {
	t.Helper()
	return p.Process(ctx, typ, bytes.NewReader(data), int64(len(data)), extract.Options{})
}

func TestProcess_TextAndPDF(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Procs: 1})
	res, err := run(t, p, t.Context(), extract.TypeText, []byte("Invoice of 3 March 2024\n\nTotal: €1.234,50 due."))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Doc.Pages) != 1 || !strings.Contains(res.Doc.Pages[0].Text, "Total") {
		t.Errorf("pages = %+v", res.Doc.Pages)
	}
	if len(res.Fields.Amounts) != 1 || res.Fields.Amounts[0].Value != "1234.50" || len(res.Fields.Dates) != 1 {
		t.Errorf("fields = %+v", res.Fields)
	}
	var progressed int
	opts := extract.Options{Progress: func(done, total int) { progressed = done }}
	pdf := xt.ProsePDF(3).Bytes()
	res, err = p.Process(t.Context(), extract.TypePDF, bytes.NewReader(pdf), int64(len(pdf)), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Doc.Pages) != 3 || res.Fields.WordCount == 0 || progressed != 3 {
		t.Errorf("pdf: %d pages, %d words, progress %d", len(res.Doc.Pages), res.Fields.WordCount, progressed)
	}
}

// TestProcess_ReusesChild: a child that processed a document cleanly
// takes the next one; one that failed a document is replaced.
func TestProcess_ReusesChild(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Procs: 1})
	pid := func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.idle) != 1 {
			t.Fatalf("%d idle children, want 1", len(p.idle))
		}
		return p.idle[0].cmd.Process.Pid
	}
	for range 2 {
		if _, err := run(t, p, t.Context(), extract.TypeText, []byte("hello")); err != nil {
			t.Fatal(err)
		}
	}
	first := pid()
	if _, err := run(t, p, t.Context(), extract.TypeHTML, []byte("<p>x\x00</p>")); !errors.Is(err, extract.ErrMalformed) {
		t.Fatalf("NUL in HTML: %v, want ErrMalformed", err)
	}
	if _, err := run(t, p, t.Context(), extract.TypeText, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if second := pid(); second == first {
		t.Errorf("child %d kept after a failed document", first)
	}
}

// TestProcess_ReplacesSpentChild: what a document maps stays mapped in
// its child (the PDF engine's memory never shrinks), so a child that grew
// past half its memory allowance is replaced rather than handed the next
// document, which would find too little left and fail as too large (the
// second of two small PDFs in a row did, in a child of 128 MiB).
func TestProcess_ReplacesSpentChild(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Procs: 1, MemoryLimit: 128 << 20})
	idle := func() (pid int, grown int64) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.idle) == 0 {
			return 0, 0
		}
		return p.idle[0].cmd.Process.Pid, p.idle[0].grown
	}
	for range 2 {
		if _, err := run(t, p, t.Context(), extract.TypeText, []byte("hello")); err != nil {
			t.Fatal(err)
		}
	}
	if pid, grown := idle(); pid == 0 {
		t.Fatalf("child of a small text replaced (grew %d MiB)", grown>>20)
	}
	pdf := xt.ProsePDF(3).Bytes()
	for i := range 3 {
		if _, err := run(t, p, t.Context(), extract.TypePDF, pdf); err != nil {
			t.Fatalf("PDF %d: %v", i+1, err)
		}
		if pid, grown := idle(); pid != 0 && grown > 64<<20 {
			t.Errorf("PDF %d: child %d kept after it grew %d MiB of its 128", i+1, pid, grown>>20)
		}
	}
}

// TestProcess_CPULimit: a document that needs more CPU time than its
// limit fails as too slow, and its child is gone when Process returns.
func TestProcess_CPULimit(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Procs: 1, CPULimit: time.Millisecond})
	_, err := run(t, p, t.Context(), extract.TypeText, bytes.Repeat([]byte("$1 "), 4<<20))
	if !errors.Is(err, extract.ErrTooSlow) || extract.Reason(err) != "too_slow" {
		t.Fatalf("err = %v, want too_slow", err)
	}
	assertNoChildren(t, p)
}

// TestProcess_MemoryLimit: a document that needs more memory than the
// child may have fails as too large; the parent's memory is not touched.
func TestProcess_MemoryLimit(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Procs: 1, MemoryLimit: 64 << 20})
	_, err := run(t, p, t.Context(), extract.TypeText, bytes.Repeat([]byte("word "), 16<<20))
	if !errors.Is(err, extract.ErrTooLarge) {
		t.Fatalf("err = %v, want too_large", err)
	}
	assertNoChildren(t, p)
	if _, err := run(t, p, t.Context(), extract.TypeText, []byte("small")); err != nil {
		t.Fatalf("the next document: %v", err)
	}
}

// TestProcess_Cancel: ending the context stops the child at once.
func TestProcess_Cancel(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Procs: 1})
	ctx, cancel := context.WithCancel(t.Context())
	progress := make(chan struct{}, 1)
	opts := extract.Options{Progress: func(int, int) {
		select {
		case progress <- struct{}{}:
		default:
		}
	}}
	go func() {
		<-progress
		cancel()
	}()
	pdf := xt.ProsePDF(100).Bytes()
	_, err := p.Process(ctx, extract.TypePDF, bytes.NewReader(pdf), int64(len(pdf)), opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	assertNoChildren(t, p)
}

// TestProcess_Bombs: hostile documents of the parser's bomb table end,
// in a child, with one of the outcomes the table expects, and within the
// child's memory limit: the PDF rows here are those whose memory only the
// sandbox bounds (PDFium's memory lives in the Go heap and grows by
// copying; a title is handed over whole). A child that finished its
// document is idle, and its peak resident set is read; one stopped for its
// memory reports too_large.
func TestProcess_Bombs(t *testing.T) {
	t.Parallel()
	const limit = 128 << 20
	for _, name := range []string{
		"pdf/flate 14 MB to 2 GiB",
		"pdf/title 30 MB",
		"pdf/title 8 MB",
		"pdf/title 30 MB in an object stream",
		"pdf/title 1 GiB in an object stream",
		"pdf/title a 1 GiB stream",
		"pdf/title a 1 GiB stream, from an object stream",
		"docx/zip bomb 6 MB to 1 GiB, claims 4 KB",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, ok := xt.Named(name)
			if !ok {
				t.Fatalf("no bomb case %q in %v", name, xt.Names())
			}
			p := newPool(t, Config{Procs: 1, MemoryLimit: limit})
			_, err := p.Process(t.Context(), extract.Type(c.Type), bytes.NewReader(c.Data), int64(len(c.Data)), extract.Options{Timeout: 10 * time.Second})
			got := extract.Reason(err)
			if !slices.Contains(c.Want, got) {
				t.Errorf("%v, want one of %q", err, c.Want)
			}
			// It needs gigabytes: the child's limit, not the engine's cap (which PDFium cannot
			// tell from a fault of its own), stops it.
			if strings.HasPrefix(name, "pdf/flate") && got != "too_large" {
				t.Errorf("%v, want too_large", err)
			}
			assertNoChildren(t, p)
			if err != nil {
				t.Logf("%q (%v)", got, err)
				return
			}
			peak, base := idlePeak(t, p)
			t.Logf("completed, peak RSS %d MiB over the child's start", (peak-base)>>20)
			if peak-base > limit+xt.RSSSlack {
				t.Errorf("peak RSS %d MiB over the child's start > limit %d MiB", (peak-base)>>20, limit>>20)
			}
		})
	}
}

// idlePeak returns the peak resident set of p's one idle child (VmHWM) and
// its resident set when it started, in bytes.
func idlePeak(t *testing.T, p *Pool) (peak, base int64) {
	t.Helper()
	p.mu.Lock()
	if len(p.idle) != 1 {
		p.mu.Unlock()
		t.Fatalf("%d idle children, want 1", len(p.idle))
	}
	c := p.idle[0]
	p.mu.Unlock()
	status, err := os.ReadFile("/proc/" + strconv.Itoa(c.cmd.Process.Pid) + "/status")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10, c.base
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0, 0
}

// TestProcess_PDFTitleStaysInChild: PDFium hands a title over whole, and
// the child is where it is: a 1 MiB /Title costs the parent's heap no more
// than the same string under /Subject, which nothing reads; the title comes
// back cut to extract.MaxTitleBytes. Not parallel: it counts the process's
// allocations (the watch, which allocates a little at every look at the
// child, looks seldom).
func TestProcess_PDFTitleStaysInChild(t *testing.T) {
	const n = 1 << 20
	p := newPool(t, Config{Procs: 1, WatchInterval: time.Second})
	allocated := func(data []byte) (uint64, *Result) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res, err := run(t, p, t.Context(), extract.TypePDF, data)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		return after.TotalAlloc - before.TotalAlloc, res
	}
	allocated(xt.LongInfoPDF("Subject", n)) // warm: the child, its engine
	base, _ := allocated(xt.LongInfoPDF("Subject", n))
	title, res := allocated(xt.LongTitlePDF(n))
	if res.Doc.Title != strings.Repeat("T", extract.MaxTitleBytes) {
		t.Errorf("title %q…", res.Doc.Title[:min(len(res.Doc.Title), 20)])
	}
	t.Logf("parent allocated %d KiB with a %d MiB title, %d KiB without", title>>10, n>>20, base>>10)
	if title > base+n/4 {
		t.Errorf("a %d MiB title cost the parent's heap %d KiB more than none (want under %d KiB)", n>>20, (title-base)>>10, n/4>>10)
	}
}

// TestChild_Environment: a child gets none of its parent's environment
// but its own settings, and has its address space capped.
func TestChild_Environment(t *testing.T) {
	t.Setenv("DOCKET_DATABASE_URL", "postgres://secret@db/docket")
	cfg, err := Config{MemoryLimit: 256 << 20}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	spawns := make(chan spawnRequest)
	go spawner(t.Context(), spawns, cfg.Nice)
	c, err := start(t.Context(), spawns, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.kill(); <-c.exited }()
	pid := strconv.Itoa(c.cmd.Process.Pid)
	env, err := os.ReadFile("/proc/" + pid + "/environ")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	if bytes.Contains(env, []byte("secret")) || !bytes.Contains(env, []byte(envChild+"=1")) {
		t.Errorf("child environment: %q", env)
	}
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) < 17 || f[16] != strconv.Itoa(cfg.Nice) {
		t.Errorf("child's nice value: %v, want %d", f[16:17], cfg.Nice)
	}
	limits, err := os.ReadFile("/proc/" + pid + "/limits")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(limits)) {
		if strings.HasPrefix(line, "Max address space") && strings.Contains(line, "unlimited") != race.Enabled {
			t.Errorf("race detector %v, limit: %s", race.Enabled, line)
		}
	}
}

// assertNoChildren checks that every child the pool started has exited.
func assertNoChildren(t *testing.T, p *Pool) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.live) != len(p.idle) {
		t.Errorf("%d children alive, %d idle: a child outlived its document", len(p.live), len(p.idle))
	}
}

// TestProcess_LargeTextInPieces: a page of over 1 MiB comes back from
// the child, in pieces cut on rune boundaries, exactly as the same
// document processed in this process.
func TestProcess_LargeTextInPieces(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Procs: 1})
	data := []byte(strings.Repeat("Grüße, 日本語 and 🚀 again. ", (5<<20/4)/32))
	got, err := run(t, p, t.Context(), extract.TypeText, data)
	if err != nil {
		t.Fatal(err)
	}
	want, err := InProcess(t.Context(), extract.TypeText, bytes.NewReader(data), int64(len(data)), extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Doc.Pages) != len(want.Doc.Pages) || got.Doc.Text() != want.Doc.Text() || got.Fields.WordCount != want.Fields.WordCount {
		t.Fatalf("child: %d pages, %d bytes, %d words; in process: %d pages, %d bytes, %d words",
			len(got.Doc.Pages), len(got.Doc.Text()), got.Fields.WordCount,
			len(want.Doc.Pages), len(want.Doc.Text()), want.Fields.WordCount)
	}
}

// TestProcess_PageRange: the child extracts only the range's pages of a
// PDF, under their real numbers, its chunks only theirs, and counts pages
// without extracting any.
func TestProcess_PageRange(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Procs: 1})
	pdf := xt.ProsePDF(6).Bytes()
	opts := extract.Options{Pages: extract.PageRange{First: 4, Last: 5}}
	res, err := p.Process(t.Context(), extract.TypePDF, bytes.NewReader(pdf), int64(len(pdf)), opts)
	if err != nil {
		t.Fatal(err)
	}
	var numbers []int
	for _, pg := range res.Doc.Pages {
		numbers = append(numbers, pg.Number)
		if !strings.Contains(pg.Text, "Page "+strconv.Itoa(pg.Number)+" of 6") {
			t.Errorf("page %d: %.60q", pg.Number, pg.Text)
		}
	}
	if !slices.Equal(numbers, []int{4, 5}) || res.Doc.PageCount != 6 {
		t.Fatalf("pages %v of %d, want [4 5] of 6", numbers, res.Doc.PageCount)
	}
	res, err = p.ProcessChunked(t.Context(), extract.TypePDF, bytes.NewReader(pdf), int64(len(pdf)), opts, Chunking{})
	if err != nil {
		t.Fatal(err)
	}
	chunks := res.Chunks
	defer func() { _ = chunks.Close() }()
	b, err := chunks.Next()
	if err != nil || chunks.Count == 0 {
		t.Fatalf("chunks: %d, %v", chunks.Count, err)
	}
	for _, c := range b.Chunks {
		if c.PageStart < 4 || c.PageEnd > 5 {
			t.Errorf("chunk %d on pages %d-%d", c.Index, c.PageStart, c.PageEnd)
		}
	}
	opts = extract.Options{CountPages: true}
	res, err = p.Process(t.Context(), extract.TypePDF, bytes.NewReader(pdf), int64(len(pdf)), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Doc.PageCount != 6 || len(res.Doc.Pages) != 0 {
		t.Errorf("counted: PageCount %d, %d pages", res.Doc.PageCount, len(res.Doc.Pages))
	}
}
