package extract_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

// tesseract returns an OCR configuration of the tesseract on PATH with English. Without it the
// test skips, or fails under DOCKET_REQUIRE_TESSERACT=1, which scripts/test.sh sets (its setup
// installs Debian's tesseract-ocr and tesseract-ocr-eng).
func tesseract(t testing.TB) *extract.OCRConfig {
	t.Helper()
	cfg := extract.OCRConfig{Languages: "eng"}
	path, err := exec.LookPath("tesseract")
	if err == nil {
		cfg.Command = path
		_, err = extract.ProbeOCR(context.Background(), cfg)
	}
	if err != nil {
		if os.Getenv("DOCKET_REQUIRE_TESSERACT") == "1" {
			t.Fatalf("DOCKET_REQUIRE_TESSERACT=1 but %v (scripts/test.sh installs Debian's tesseract-ocr and tesseract-ocr-eng)", err)
		}
		t.Skipf("no tesseract with English: %v", err)
	}
	return &cfg
}

// ocrEngine is the PDF engine of the tests that run OCR, which hold an instance while
// tesseract reads a page: on the shared engine, the deadline tests waited for an instance past
// their deadline.
var ocrEngine = sync.OnceValues(func() (*extract.PDFEngine, error) {
	return extract.NewPDFEngine(extract.PDFConfig{Instances: 2, MemoryLimit: 256 << 20})
})

// closeOCREngine closes ocrEngine if a test started it.
func closeOCREngine() error {
	if ocrEngineUsed.Load() {
		if e, err := ocrEngine(); err == nil {
			return e.Close()
		}
	}
	return nil
}

var ocrEngineUsed atomic.Bool

// ocrOptions returns opts with the OCR tests' engine.
func ocrOptions(t testing.TB, opts extract.Options) extract.Options {
	t.Helper()
	ocrEngineUsed.Store(true)
	e, err := ocrEngine()
	if err != nil {
		t.Fatal(err)
	}
	opts.PDF = e
	return opts
}

// scanned returns pdf as a scanner would have made it: each page rendered at dpi, written as an
// image and nothing else.
func scanned(t testing.TB, pdf []byte, dpi int) []byte {
	t.Helper()
	pages, err := extract.RenderGray(ocrOptions(t, extract.Options{}).PDF, pdf, dpi)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return xt.ImagePDF(pages, dpi)
}

// TestOCR_Quality reads a scan (300 dpi) of a two-page letter, prose as a word processor sets
// it, back through Extract and scores the text against the original's text layer with the
// extraction benchmarks' similarity.
func TestOCR_Quality(t *testing.T) {
	t.Parallel()
	ocr := tesseract(t)
	pdf := xt.LetterPDF().Bytes()
	want, err := extractBytes(t, extract.TypePDF, pdf, extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scan := scanned(t, pdf, 300)
	if off, err := extractBytes(t, extract.TypePDF, scan, extract.Options{}); err != nil || off.Text() != "" {
		t.Fatalf("the scan has a text layer: %q, %v", off.Text(), err)
	}
	got, err := extractBytes(t, extract.TypePDF, scan, ocrOptions(t, extract.Options{OCR: ocr}))
	if err != nil {
		t.Fatal(err)
	}
	score := xt.Similarity(want.Text(), got.Text())
	t.Logf("similarity %.4f (%d runes in the text layer, %d read by OCR)", score,
		len([]rune(want.Text())), len([]rune(got.Text())))
	if score < 0.90 {
		t.Errorf("similarity %.4f < 0.90\n--- text layer\n%s\n--- OCR\n%s", score, want.Text(), got.Text())
	}
	if want := []string{"text of 2 of 2 pages read by OCR (eng)"}; !slices.Equal(got.Warnings, want) {
		t.Errorf("warnings = %q, want %q", got.Warnings, want)
	}
}

// TestOCR_Off: without Options.OCR a scan keeps its "OCR needed" warning and no text.
func TestOCR_Off(t *testing.T) {
	t.Parallel()
	scan := scanned(t, xt.TablePDF().Bytes(), 100)
	doc, err := extractBytes(t, extract.TypePDF, scan, extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Text() != "" || !slices.Equal(doc.Warnings, []string{extract.WarnNoTextLayer}) {
		t.Errorf("text %q, warnings %q; want none and [%q]", doc.Text(), doc.Warnings, extract.WarnNoTextLayer)
	}
}

// TestOCR_Progress: with OCR, every page reports as it is read, in order.
func TestOCR_Progress(t *testing.T) {
	t.Parallel()
	cmd := script(t, `/bin/cat >/dev/null; echo read`)
	var mu sync.Mutex
	var got []string
	opts := extract.Options{OCR: &extract.OCRConfig{Command: cmd, DPI: 72}, Progress: func(done, total int) {
		mu.Lock()
		got = append(got, fmt.Sprintf("%d/%d", done, total))
		mu.Unlock()
	}}
	doc, err := extractBytes(t, extract.TypePDF, xt.MixedPDF().Bytes(), ocrOptions(t, opts))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"1/3", "2/3", "3/3"}; !slices.Equal(got, want) {
		t.Errorf("progress %q, want %q", got, want)
	}
	// Only the page without text was sent to OCR.
	texts := []string{doc.Pages[0].Text, doc.Pages[1].Text, doc.Pages[2].Text}
	if want := []string{"First page has text.", "read", "Third page has text."}; !slices.Equal(texts, want) {
		t.Errorf("pages %q, want %q", texts, want)
	}
	if want := []string{"text of 1 of 3 pages read by OCR (eng)"}; !slices.Equal(doc.Warnings, want) {
		t.Errorf("warnings %q, want %q", doc.Warnings, want)
	}
}

// TestOCR_NothingFound: pages where neither the text layer nor OCR finds text say so, and do
// not ask for OCR.
func TestOCR_NothingFound(t *testing.T) {
	t.Parallel()
	cmd := script(t, `/bin/cat >/dev/null; printf '\f'`)
	opts := ocrOptions(t, extract.Options{OCR: &extract.OCRConfig{Command: cmd, DPI: 72}})
	doc, err := extractBytes(t, extract.TypePDF, xt.NoTextPDF().Bytes(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(doc.Warnings, []string{extract.WarnOCRNoText}) {
		t.Errorf("warnings %q, want [%q]", doc.Warnings, extract.WarnOCRNoText)
	}
	doc, err = extractBytes(t, extract.TypePDF, xt.MixedPDF().Bytes(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"page 2: " + extract.WarnOCRNoText}; !slices.Equal(doc.Warnings, want) {
		t.Errorf("warnings %q, want %q", doc.Warnings, want)
	}
}

// TestOCR_Process checks what a tesseract process gets: the page as a PGM of the page's size
// at the configured resolution on its standard input, its arguments, an environment of
// OMP_THREAD_LIMIT and TESSDATA_PREFIX only, and its limits, set before it reads the page.
func TestOCR_Process(t *testing.T) {
	t.Parallel()
	cmd := script(t, `/usr/bin/head -c 16 | /usr/bin/tr '\n' ' '; echo; /usr/bin/env | /usr/bin/sort; `+
		`echo "as=$(ulimit -v) cpu=$(ulimit -t) core=$(ulimit -c) fsize=$(ulimit -f) args=$*"; /bin/cat >/dev/null`)
	ocr := &extract.OCRConfig{Command: cmd, DPI: 144, Languages: "eng+deu", PageMemory: 256 << 20,
		PageCPU: 6500 * time.Millisecond, TessdataDir: "/opt/tessdata"}
	doc, err := extractBytes(t, extract.TypePDF, xt.NoTextPDF().Bytes(), ocrOptions(t, extract.Options{OCR: ocr}))
	if err != nil {
		t.Fatal(err)
	}
	want := "P5 1224 1584 255\n" + // 612×792 points at 144 dpi
		"OMP_THREAD_LIMIT=1\nPWD=/\nTESSDATA_PREFIX=/opt/tessdata\n" + // PWD: the shell's own
		"as=262144 cpu=7 core=0 fsize=0 args=- - --dpi 144 -l eng+deu"
	if got := doc.Pages[0].Text; got != want {
		t.Errorf("tesseract saw:\n%s\nwant:\n%s", got, want)
	}
}

// TestOCR_PageFailures: a page whose tesseract fails, runs out of memory or past the page's
// deadline is skipped with a warning; the document is still extracted.
func TestOCR_PageFailures(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		ocr  extract.OCRConfig
		want string
	}{
		{"missing", extract.OCRConfig{Command: filepath.Join(t.TempDir(), "tesseract")},
			"page 2: OCR failed: start tesseract: "},
		{"exit", extract.OCRConfig{Command: script(t, `/bin/cat >/dev/null; echo 'Failed loading language xx' >&2; exit 1`)},
			"page 2: OCR failed: tesseract: exit status 1: Failed loading language xx"},
		{"deadline", extract.OCRConfig{Command: script(t, `/bin/cat >/dev/null; exec /bin/sleep 60`), PageTimeout: 200 * time.Millisecond},
			"page 2: OCR failed: no result within 200ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.ocr.DPI = 72
			doc, err := extractBytes(t, extract.TypePDF, xt.MixedPDF().Bytes(), ocrOptions(t, extract.Options{OCR: &c.ocr}))
			if err != nil {
				t.Fatal(err)
			}
			if len(doc.Warnings) != 1 || !strings.HasPrefix(doc.Warnings[0], c.want) {
				t.Errorf("warnings %q, want one starting %q", doc.Warnings, c.want)
			}
			if doc.Pages[0].Text == "" || doc.Pages[1].Text != "" {
				t.Errorf("pages %+v", doc.Pages)
			}
		})
	}
}

// TestOCR_Memory: real tesseract under a PageMemory too small for it fails the page.
func TestOCR_Memory(t *testing.T) {
	t.Parallel()
	ocr := *tesseract(t)
	ocr.PageMemory, ocr.DPI = 32<<20, 72
	doc, err := extractBytes(t, extract.TypePDF, xt.MixedPDF().Bytes(), ocrOptions(t, extract.Options{OCR: &ocr}))
	if err != nil {
		t.Fatal(err)
	}
	if want := "page 2: OCR failed: tesseract: "; len(doc.Warnings) != 1 || !strings.HasPrefix(doc.Warnings[0], want) {
		t.Errorf("warnings %q, want one starting %q", doc.Warnings, want)
	}
}

// TestOCR_Cancel: the end of the document's context stops a page's tesseract, which is gone
// when Extract returns.
func TestOCR_Cancel(t *testing.T) {
	t.Parallel()
	cmd := script(t, `/bin/cat >/dev/null; exec /bin/sleep 61.5`)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	found := make(chan int, 1)
	go func() { // cancels once tesseract runs
		defer cancel()
		for ctx.Err() == nil {
			if pid := childRunning("/bin/sleep\x0061.5\x00"); pid > 0 {
				found <- pid
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	pdf := xt.NoTextPDF().Bytes()
	_, err := extract.Extract(ctx, extract.TypePDF, bytes.NewReader(pdf), int64(len(pdf)),
		ocrOptions(t, extract.Options{OCR: &extract.OCRConfig{Command: cmd, DPI: 72}}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	pid := <-found
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("tesseract %d still there after Extract returned (kill 0: %v)", pid, err)
	}
}

// childRunning returns the process id of a child of this process whose command line is
// cmdline (its arguments NUL-terminated), or 0.
func childRunning(cmdline string) int {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err != nil || string(b) != cmdline {
			continue
		}
		st, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// After the command's ')': state, then the parent's id.
		f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
			return pid
		}
	}
	return 0
}

// TestOCR_TextCap: text read by OCR counts against MaxTextLength.
func TestOCR_TextCap(t *testing.T) {
	t.Parallel()
	cmd := script(t, `/bin/cat >/dev/null; /usr/bin/head -c 5000 /dev/zero | /usr/bin/tr '\0' a`)
	opts := ocrOptions(t, extract.Options{OCR: &extract.OCRConfig{Command: cmd, DPI: 72}, MaxTextLength: 4096})
	if _, err := extractBytes(t, extract.TypePDF, xt.NoTextPDF().Bytes(), opts); !errors.Is(err, extract.ErrTooLarge) {
		t.Errorf("err = %v, want ErrTooLarge", err)
	}
}

func TestOCRConfig_Validate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cfg extract.OCRConfig
		ok  bool
	}{
		{extract.OCRConfig{Command: "/usr/bin/tesseract"}, true},
		{extract.OCRConfig{Command: "/usr/bin/tesseract", Languages: "eng+deu+chi_sim+script/Latin"}, true},
		{extract.OCRConfig{}, false},
		{extract.OCRConfig{Command: "t", Languages: "--help"}, false},
		{extract.OCRConfig{Command: "t", Languages: "eng+"}, false},
		{extract.OCRConfig{Command: "t", Languages: "eng deu"}, false},
		{extract.OCRConfig{Command: "t", DPI: 20}, false},
	} {
		if err := c.cfg.Validate(); (err == nil) != c.ok {
			t.Errorf("%+v: Validate() = %v, want ok %v", c.cfg, err, c.ok)
		}
	}
}

func TestProbeOCR(t *testing.T) {
	t.Parallel()
	cmd := script(t, `echo 'List of available languages in "/x/" (2):'; echo eng; echo osd`)
	if langs, err := extract.ProbeOCR(t.Context(), extract.OCRConfig{Command: cmd}); err != nil || !slices.Equal(langs, []string{"eng", "osd"}) {
		t.Errorf("ProbeOCR = %q, %v", langs, err)
	}
	_, err := extract.ProbeOCR(t.Context(), extract.OCRConfig{Command: cmd, Languages: "eng+deu"})
	if err == nil || !strings.Contains(err.Error(), `no data for language "deu"`) {
		t.Errorf("ProbeOCR(eng+deu) = %v", err)
	}
	if _, err := extract.ProbeOCR(t.Context(), extract.OCRConfig{Command: filepath.Join(t.TempDir(), "none")}); err == nil {
		t.Error("ProbeOCR of a missing command: no error")
	}
}

func TestRenderSize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		w, h           float64
		dpi, maxPixels int
		pw, ph, at     int
		err            bool
	}{
		{612, 792, 300, 25_000_000, 2550, 3300, 300, false},
		{612, 792, 300, 2_000_000, 1243, 1608, 146, false}, // lowered to fit
		{14400, 14400, 300, 25_000_000, 0, 0, 0, true},     // 200 inches square: under 72 dpi
		{0, 792, 300, 25_000_000, 0, 0, 0, true},
	} {
		pw, ph, at, err := extract.RenderSize(c.w, c.h, c.dpi, c.maxPixels)
		if pw != c.pw || ph != c.ph || at != c.at || (err != nil) != c.err {
			t.Errorf("RenderSize(%g, %g, %d, %d) = %d, %d, %d, %v", c.w, c.h, c.dpi, c.maxPixels, pw, ph, at, err)
		}
	}
}

// script writes a shell script that stands in for tesseract and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tesseract")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestOCR_Cost: a parse with OCR is reckoned at a rendered page and its copy more.
func TestOCR_Cost(t *testing.T) {
	t.Parallel()
	plain := extract.Cost(extract.TypePDF, 1<<20, extract.Options{})
	ocr := extract.Cost(extract.TypePDF, 1<<20, extract.Options{OCR: &extract.OCRConfig{Command: "tesseract"}})
	if ocr-plain != 2*extract.DefaultOCRMaxPixels {
		t.Errorf("cost with OCR %d, without %d: want %d more", ocr, plain, 2*extract.DefaultOCRMaxPixels)
	}
}

// TestOCR_InvalidConfig: Extract refuses OCR settings that cannot work, as the caller's error
// (not the document's).
func TestOCR_InvalidConfig(t *testing.T) {
	t.Parallel()
	_, err := extractBytes(t, extract.TypePDF, xt.NoTextPDF().Bytes(),
		extract.Options{OCR: &extract.OCRConfig{Command: "/usr/bin/tesseract", Languages: "-c tessedit_write_images=1"}})
	if err == nil || extract.Permanent(err) {
		t.Errorf("err = %v, want a caller's error", err)
	}
}
