package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	pdfiumerr "github.com/klippa-app/go-pdfium/errors"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/responses"
)

// WarnNoTextLayer is the warning of a PDF without any text: its pages are images.
const WarnNoTextLayer = "no text layer; OCR needed"

// errPageUnreadable is a page PDFium cannot load; the others are still extracted.
var errPageUnreadable = errors.New("page unreadable")

// pdfTextChunk is how many characters one FPDFText_GetText call fetches.
const pdfTextChunk = 1 << 16

// extractPDF parses a PDF with the engine in opts (or the default one).
func extractPDF(ctx context.Context, r io.ReaderAt, size int64, opts *Options) (*Document, error) {
	data, err := readAll(r, size)
	if err != nil {
		return nil, err
	}
	if err := precheckPDF(data); err != nil {
		return nil, err
	}
	if opts.OCR != nil {
		if err := opts.OCR.Validate(); err != nil {
			return nil, err
		}
	}
	engine := opts.PDF // set by admit
	job := &pdfJob{data: data, opts: opts, ctx: ctx, doc: &Document{}}
	job.gate.fn = opts.Progress
	defer job.gate.close()
	if err := engine.run(ctx, job.run); err != nil {
		return nil, err
	}
	doc := job.doc
	if names := activeNames(data); len(names) > 0 {
		doc.ActiveContent = true
		doc.Warnings = append(doc.Warnings, "active content: "+strings.Join(names, ", "))
	} else if job.active {
		doc.ActiveContent = true
		doc.Warnings = append(doc.Warnings, "active content: JavaScript or EmbeddedFile")
	}
	return doc, nil
}

// precheckPDF rejects what is not worth starting PDFium for: no "%PDF-" header at offset 0, or
// no "%%EOF" in the last KiB (a truncated file: Acrobat, too, looks for it only there).
func precheckPDF(data []byte) error {
	if !bytes.HasPrefix(data, []byte("%PDF-")) {
		return fmt.Errorf("pdf: no %%PDF- header: %w", ErrMalformed)
	}
	if !bytes.Contains(data[max(len(data)-1024, 0):], []byte("%%EOF")) {
		return fmt.Errorf("pdf: no end-of-file marker in the last 1024 bytes (truncated?): %w", ErrMalformed)
	}
	return nil
}

// pdfJob is one document's parse, run on the engine's goroutine.
type pdfJob struct {
	data   []byte
	opts   *Options
	ctx    context.Context
	doc    *Document
	active bool // PDFium counted document JavaScript or attachments
	total  int  // bytes of text so far
	gate   progressGate
	ocr    ocrState
}

// run implements pdfCall. Errors from PDFium's own checks (format, password) leave the
// instance clean; any other failure of a call marks it broken.
func (j *pdfJob) run(inst pdfiumCalls) (bool, error) {
	opened, err := inst.OpenDocument(&requests.OpenDocument{File: &j.data})
	if err != nil {
		return openErr(err)
	}
	doc := opened.Document
	defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: doc}) //nolint:errcheck // best effort: the instance is discarded anyway
	count, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: doc})
	if err != nil {
		return true, fmt.Errorf("pdf: page count: %w: %w", err, ErrMalformed)
	}
	n := count.PageCount
	switch {
	case n <= 0:
		return false, fmt.Errorf("pdf: no pages: %w", ErrMalformed)
	case n > j.opts.MaxPages:
		return false, fmt.Errorf("pdf: %d pages > cap %d: %w", n, j.opts.MaxPages, ErrTooLarge)
	}
	j.meta(inst, doc)
	j.doc.PageCount = n
	if j.opts.CountPages {
		return false, nil
	}
	from, to := j.opts.Pages.bounds(n)
	texts := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		if err := deadlineErr(j.ctx, "pdf"); err != nil {
			return false, err
		}
		text, broken, err := j.page(inst, doc, i)
		if err == nil && j.needsOCR(text) {
			text, broken, err = j.ocrPage(inst, doc, i)
		}
		if errors.Is(err, errPageUnreadable) {
			j.doc.Warnings = append(j.doc.Warnings, fmt.Sprintf("page %d: unreadable, skipped", i+1))
		} else if err != nil {
			return broken, fmt.Errorf("pdf: page %d: %w", i+1, err)
		}
		texts = append(texts, text)
		j.gate.report(i+1-from, to-from)
	}
	j.doc.Pages = pagesFromNumber(from+1, texts)
	switch {
	case len(texts) == 0: // a range past the end: no page to warn about
	case j.opts.OCR != nil:
		j.doc.Warnings = append(j.doc.Warnings, j.ocrWarnings()...)
	default:
		j.doc.Warnings = append(j.doc.Warnings, textLayerWarnings(j.doc.Pages)...)
	}
	return false, nil
}

// openErr classifies a failure to open: PDFium's password and security errors are ErrEncrypted,
// its format errors ErrMalformed; anything else (a trap) breaks the instance.
func openErr(err error) (bool, error) {
	switch {
	case errors.Is(err, pdfiumerr.ErrPassword), errors.Is(err, pdfiumerr.ErrSecurity):
		return false, fmt.Errorf("pdf: password required: %w", ErrEncrypted)
	case errors.Is(err, pdfiumerr.ErrFormat), errors.Is(err, pdfiumerr.ErrFile),
		errors.Is(err, pdfiumerr.ErrUnknown), errors.Is(err, pdfiumerr.ErrPage),
		errors.Is(err, pdfiumerr.ErrUnexpected), errors.Is(err, pdfiumerr.ErrSuccess):
		return false, fmt.Errorf("pdf: open: %w: %w", err, ErrMalformed)
	}
	return true, fmt.Errorf("pdf: open: %w: %w", err, ErrMalformed)
}

// meta reads the title, the security handler and PDFium's view of active content. Failures
// here are not fatal: the page loop will meet a broken instance soon enough.
func (j *pdfJob) meta(inst pdfiumCalls, doc references.FPDF_DOCUMENT) {
	if t, err := readTitle(inst, doc); err == nil {
		j.doc.Title = t
	}
	if s, err := inst.FPDF_GetSecurityHandlerRevision(&requests.FPDF_GetSecurityHandlerRevision{Document: doc}); err == nil && s.SecurityHandlerRevision >= 0 {
		j.doc.Warnings = append(j.doc.Warnings, "encrypted with an empty user password")
	}
	if js, err := inst.FPDFDoc_GetJavaScriptActionCount(&requests.FPDFDoc_GetJavaScriptActionCount{Document: doc}); err == nil && js.JavaScriptActionCount > 0 {
		j.active = true
	}
	if at, err := inst.FPDFDoc_GetAttachmentCount(&requests.FPDFDoc_GetAttachmentCount{Document: doc}); err == nil && at.AttachmentCount > 0 {
		j.active = true
	}
}

// page returns the raw text of page i (0-based) through FPDFText.
func (j *pdfJob) page(inst pdfiumCalls, doc references.FPDF_DOCUMENT, i int) (string, bool, error) {
	pg, broken, err := loadPage(inst, doc, i)
	if err != nil {
		return "", broken, err
	}
	defer inst.FPDF_ClosePage(&requests.FPDF_ClosePage{Page: pg}) //nolint:errcheck // best effort
	tp, err := inst.FPDFText_LoadPage(&requests.FPDFText_LoadPage{Page: requests.Page{ByReference: &pg}})
	if err != nil {
		return "", true, fmt.Errorf("text: %w: %w", err, ErrMalformed)
	}
	defer inst.FPDFText_ClosePage(&requests.FPDFText_ClosePage{TextPage: tp.TextPage}) //nolint:errcheck // best effort
	cc, err := inst.FPDFText_CountChars(&requests.FPDFText_CountChars{TextPage: tp.TextPage})
	if err != nil {
		return "", true, fmt.Errorf("count chars: %w: %w", err, ErrMalformed)
	}
	var b strings.Builder
	for start := 0; start < cc.Count; start += pdfTextChunk {
		t, err := inst.FPDFText_GetText(&requests.FPDFText_GetText{
			TextPage: tp.TextPage, StartIndex: start, Count: min(pdfTextChunk, cc.Count-start),
		})
		if err != nil {
			return "", true, fmt.Errorf("get text: %w: %w", err, ErrMalformed)
		}
		b.WriteString(t.Text)
		if j.total+b.Len() > j.opts.MaxTextLength {
			return "", false, fmt.Errorf("text > cap %d: %w", j.opts.MaxTextLength, ErrTooLarge)
		}
	}
	j.total += b.Len()
	return b.String(), false, nil
}

// loadPage loads page i (0-based) with its annotations' appearances merged into its content:
// FPDFText reads only the content stream, and text that a reader shows in a FreeText comment,
// a form field or a shape's label is still text the page carries. The page is flattened in
// memory (the document is never saved) and then loaded again, as PDFium requires.
func loadPage(inst pdfiumCalls, doc references.FPDF_DOCUMENT, i int) (references.FPDF_PAGE, bool, error) {
	load := func() (references.FPDF_PAGE, bool, error) {
		pg, err := inst.FPDF_LoadPage(&requests.FPDF_LoadPage{Document: doc, Index: i})
		if errors.Is(err, pdfiumerr.ErrPage) {
			return "", false, errPageUnreadable
		}
		if err != nil {
			return "", true, fmt.Errorf("load: %w: %w", err, ErrMalformed)
		}
		return pg.Page, false, nil
	}
	pg, broken, err := load()
	if err != nil {
		return pg, broken, err
	}
	ref := requests.Page{ByReference: &pg}
	if n, err := inst.FPDFPage_GetAnnotCount(&requests.FPDFPage_GetAnnotCount{Page: ref}); err != nil || n.Count == 0 {
		return pg, false, nil
	}
	flat, err := inst.FPDFPage_Flatten(&requests.FPDFPage_Flatten{Page: ref, Usage: requests.FPDFPage_FlattenUsageNormalDisplay})
	if err != nil {
		_, _ = inst.FPDF_ClosePage(&requests.FPDF_ClosePage{Page: pg})
		return "", true, fmt.Errorf("flatten: %w: %w", err, ErrMalformed)
	}
	if flat.Result != responses.FPDFPage_FlattenResultSuccess {
		return pg, false, nil
	}
	_, _ = inst.FPDF_ClosePage(&requests.FPDF_ClosePage{Page: pg})
	return load()
}

// textLayerWarnings returns WarnNoTextLayer when no page has text, else one warning per page
// without text.
func textLayerWarnings(pages []Page) []string {
	var empty []int
	for _, p := range pages {
		if p.Text == "" {
			empty = append(empty, p.Number)
		}
	}
	if len(empty) == len(pages) {
		return []string{WarnNoTextLayer}
	}
	warnings := make([]string, 0, len(empty))
	for _, n := range empty {
		warnings = append(warnings, fmt.Sprintf("page %d: %s", n, WarnNoTextLayer))
	}
	return warnings
}

// progressGate forwards progress until closed, so no report arrives after Extract returns.
type progressGate struct {
	mu     sync.Mutex
	closed bool
	fn     func(done, total int)
}

func (g *progressGate) report(done, total int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed && g.fn != nil {
		g.fn(done, total)
	}
}

func (g *progressGate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}
