package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/klippa-app/go-pdfium/references"
)

// Defaults for OCRConfig fields left zero.
const (
	DefaultOCRLanguages   = "eng"
	DefaultOCRDPI         = 300
	DefaultOCRPageTimeout = time.Minute
	DefaultOCRPageCPU     = time.Minute
	DefaultOCRPageMemory  = 1 << 30
	// DefaultOCRMaxPixels is an A3 page at 300 dpi (17.4 million) and some margin: 25 MB of
	// gray bitmap in PDFium's memory, and as much again in Go's.
	DefaultOCRMaxPixels = 25_000_000
)

// WarnOCRNoText is the warning of a PDF whose pages have no text layer and in whose images
// OCR found no text either.
const WarnOCRNoText = "no text layer; OCR found no text"

// OCRConfig turns on optical character recognition of PDF pages without a text layer: each
// such page is rendered by PDFium to a gray bitmap and read by Tesseract, one process per page.
//
// The tesseract process is bounded on its own, whatever runs Extract: an address-space limit
// (PageMemory) and a CPU-time limit (PageCPU) set on it before it is sent the page, a wall-clock
// deadline (PageTimeout, and the document's own), a kill at the document's cancellation or when
// the process that started it dies (Linux), one thread, and an environment of nothing but
// OMP_THREAD_LIMIT and TESSDATA_PREFIX. Its CPU time is the document's: the process that waits
// for it adds it to its children's time, which a sandbox's watchdog counts against the
// document's CPU limit as each page finishes (pipeline/sandbox), and no one page may take more
// than PageCPU.
type OCRConfig struct {
	// Command is the tesseract executable. A sandbox child has no PATH: give an absolute path
	// (exec.LookPath's answer).
	Command string
	// Languages are Tesseract's language codes joined by '+', e.g. "eng+deu" (default
	// DefaultOCRLanguages). Each needs its traineddata installed (Debian: tesseract-ocr-LANG).
	Languages string
	// DPI is the resolution pages are rendered at (default DefaultOCRDPI), lowered for a page
	// whose bitmap would pass MaxPixels.
	DPI int
	// MaxPixels caps a rendered page's pixels (default DefaultOCRMaxPixels).
	MaxPixels int
	// PageTimeout bounds one page's recognition in wall time (default DefaultOCRPageTimeout);
	// a page past it is skipped with a warning.
	PageTimeout time.Duration
	// PageCPU is the CPU-time limit of one page's tesseract process (RLIMIT_CPU, whole
	// seconds, rounded up; default DefaultOCRPageCPU).
	PageCPU time.Duration
	// PageMemory is the address-space limit of one page's tesseract process (RLIMIT_AS,
	// default DefaultOCRPageMemory).
	PageMemory int64
	// TessdataDir, when set, is where the language data is (TESSDATA_PREFIX); default:
	// Tesseract's own.
	TessdataDir string
}

// withDefaults fills in the zero fields.
func (c OCRConfig) withDefaults() OCRConfig {
	if c.Languages == "" {
		c.Languages = DefaultOCRLanguages
	}
	if c.DPI <= 0 {
		c.DPI = DefaultOCRDPI
	}
	if c.MaxPixels <= 0 {
		c.MaxPixels = DefaultOCRMaxPixels
	}
	if c.PageTimeout <= 0 {
		c.PageTimeout = DefaultOCRPageTimeout
	}
	if c.PageCPU <= 0 {
		c.PageCPU = DefaultOCRPageCPU
	}
	if c.PageMemory <= 0 {
		c.PageMemory = DefaultOCRPageMemory
	}
	return c
}

// ocrLanguages is what Languages may hold: codes such as "eng", "chi_sim" or "script/Latin",
// joined by '+'. Nothing else reaches tesseract's command line.
var ocrLanguages = regexp.MustCompile(`^[A-Za-z0-9_]+(/[A-Za-z0-9_]+)?(\+[A-Za-z0-9_]+(/[A-Za-z0-9_]+)?)*$`)

// Validate reports a configuration that cannot work: no command, malformed languages, a
// resolution out of 72 to 1200 dpi.
func (c OCRConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Command == "":
		return errors.New("ocr: no tesseract command")
	case !ocrLanguages.MatchString(c.Languages):
		return fmt.Errorf("ocr: languages %q: want codes such as eng or eng+deu", c.Languages)
	case c.DPI < minRenderDPI || c.DPI > 1200:
		return fmt.Errorf("ocr: %d dpi: want %d to 1200", c.DPI, minRenderDPI)
	}
	return nil
}

// ProbeOCR checks that c.Command runs and has data for each of c.Languages, so that a server
// can say at its start why OCR is off rather than on every page. It returns the languages
// installed.
func ProbeOCR(ctx context.Context, c OCRConfig) ([]string, error) {
	c = c.withDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Command, "--list-langs")
	cmd.Env = c.env()
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("ocr: %s --list-langs: %w", c.Command, err)
	}
	// The first line names the directory; a language per line follows.
	_, list, _ := strings.Cut(string(out), "\n")
	have := map[string]bool{}
	var installed []string
	for _, l := range strings.Fields(list) {
		have[l] = true
		installed = append(installed, l)
	}
	for _, lang := range strings.Split(c.Languages, "+") {
		if !have[lang] {
			return installed, fmt.Errorf("ocr: tesseract has no data for language %q (installed: %s)", lang, strings.Join(installed, ", "))
		}
	}
	return installed, nil
}

// env is the whole environment of a tesseract process.
func (c *OCRConfig) env() []string {
	env := []string{"OMP_THREAD_LIMIT=1"} // one core: the document's, not the machine's
	if c.TessdataDir != "" {
		env = append(env, "TESSDATA_PREFIX="+c.TessdataDir)
	}
	return env
}

// ocrState is what a PDF parse keeps of its OCR.
type ocrState struct {
	read   int          // pages whose text came from OCR
	failed map[int]bool // numbers of the pages OCR could not read; their warning says why
}

// needsOCR reports whether a page is to be read by OCR: OCR is on and text, what its text layer
// gave, normalises to nothing.
func (j *pdfJob) needsOCR(text string) bool {
	if j.opts.OCR == nil {
		return false
	}
	for _, r := range text {
		if unicode.IsLetter(r) || unicode.IsNumber(r) { // kept by Normalize: no need to run it
			return false
		}
	}
	return Normalize(text) == ""
}

// ocrPage reads page i (0-based) by OCR. A page OCR cannot read (tesseract failed, hit a
// limit or the page's deadline) gets a warning and no text; the document fails only at its own
// deadline, on a broken engine instance, or past MaxTextLength.
func (j *pdfJob) ocrPage(inst pdfiumCalls, doc references.FPDF_DOCUMENT, i int) (string, bool, error) {
	cfg := j.opts.OCR
	skip := func(why error) (string, bool, error) {
		if j.ocr.failed == nil {
			j.ocr.failed = map[int]bool{}
		}
		j.ocr.failed[i+1] = true
		j.doc.Warnings = append(j.doc.Warnings, fmt.Sprintf("page %d: OCR failed: %v", i+1, why))
		return "", false, nil
	}
	img, dpi, broken, err := renderGray(inst, doc, i, cfg.DPI, cfg.MaxPixels)
	switch {
	case errors.Is(err, errPageTooBig):
		return skip(err)
	case err != nil:
		return "", broken, fmt.Errorf("render: %w", err)
	}
	text, err := recognize(j.ctx, cfg, img, dpi, j.opts.MaxTextLength-j.total)
	switch {
	case j.ctx.Err() != nil:
		return "", false, deadlineErr(j.ctx, "ocr")
	case errors.Is(err, ErrTooLarge):
		return "", false, fmt.Errorf("text > cap %d: %w", j.opts.MaxTextLength, ErrTooLarge)
	case err != nil:
		return skip(err)
	}
	j.total += len(text)
	if Normalize(text) != "" {
		j.ocr.read++
	}
	return text, false, nil
}

// recognize runs tesseract on img (dpi dots per inch) and returns the text it read, at most
// maxText bytes (more is ErrTooLarge).
func recognize(ctx context.Context, cfg *OCRConfig, img *image.Gray, dpi, maxText int) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.PageTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cfg.Command, "-", "-", "--dpi", strconv.Itoa(dpi), "-l", cfg.Languages)
	cmd.Env = cfg.env()
	cmd.Dir = "/"
	cmd.SysProcAttr = ocrProcAttr()
	cmd.WaitDelay = time.Second
	stdout := &cappedBuffer{max: max(maxText, 0) + 1}
	stderr := &cappedBuffer{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("start tesseract: %w", err)
	}
	// The page is sent only once the limits hold: what the document makes tesseract do runs
	// under them.
	if err := limitOCRProcess(cmd.Process.Pid, cfg); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return "", fmt.Errorf("limit tesseract: %w", err)
	}
	writeErr := writePGM(stdin, img)
	if cerr := stdin.Close(); writeErr == nil {
		writeErr = cerr
	}
	err = cmd.Wait()
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "", fmt.Errorf("no result within %s", cfg.PageTimeout)
	case err != nil:
		return "", fmt.Errorf("tesseract: %w%s", err, lastLine(stderr.String()))
	case writeErr != nil:
		return "", fmt.Errorf("sending the page: %w", writeErr)
	case stdout.over:
		return "", ErrTooLarge
	}
	return strings.ReplaceAll(stdout.String(), "\f", "\n"), nil
}

// lastLine returns ": " and the last line of tesseract's diagnostics, cut to 200 bytes, or "".
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	if s == "" {
		return ""
	}
	return ": " + strings.ToValidUTF8(s, "?")
}

// writePGM writes img as a binary PGM (P5), which Tesseract reads from its standard input
// with no decoding cost.
func writePGM(w interface{ Write([]byte) (int, error) }, img *image.Gray) error {
	b := img.Bounds()
	if _, err := fmt.Fprintf(w, "P5\n%d %d\n255\n", b.Dx(), b.Dy()); err != nil {
		return err
	}
	if img.Stride == b.Dx() {
		_, err := w.Write(img.Pix[:b.Dx()*b.Dy()])
		return err
	}
	for y := range b.Dy() {
		if _, err := w.Write(img.Pix[y*img.Stride : y*img.Stride+b.Dx()]); err != nil {
			return err
		}
	}
	return nil
}

// cappedBuffer keeps the first max bytes written to it and notes whether more came.
type cappedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room < len(p) {
		c.over = true
		c.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// ocrWarnings returns the text-layer warnings of a parse that ran OCR: how many pages OCR
// read, and WarnOCRNoText for the document, or for each page, where neither the text layer nor
// OCR gave text (pages whose OCR failed have their own warning).
func (j *pdfJob) ocrWarnings() []string {
	pages := j.doc.Pages
	var warnings []string
	if j.ocr.read > 0 {
		warnings = append(warnings, fmt.Sprintf("text of %d of %d pages read by OCR (%s)", j.ocr.read, len(pages), j.opts.OCR.Languages))
	}
	var empty []int
	for _, p := range pages {
		if p.Text == "" && !j.ocr.failed[p.Number] {
			empty = append(empty, p.Number)
		}
	}
	if len(empty) == len(pages) {
		return append(warnings, WarnOCRNoText)
	}
	for _, n := range empty {
		warnings = append(warnings, fmt.Sprintf("page %d: %s", n, WarnOCRNoText))
	}
	return warnings
}
