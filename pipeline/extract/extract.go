package extract

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Extract parses the document of type typ held in r (size bytes) and returns its normalised
// text page by page. The parse is bounded by opts (bytes, pages, text length, DOCX caps) and by
// the earlier of ctx's deadline and opts.Timeout: past it, Extract returns ErrTimeout, killing a
// stuck PDF engine call. Input errors are the package's sentinels (see Reason); a canceled ctx
// returns ctx's error.
func Extract(ctx context.Context, typ Type, r io.ReaderAt, size int64, opts Options) (doc *Document, err error) {
	opts = opts.withDefaults()
	switch {
	case size == 0:
		return nil, ErrEmpty
	case size < 0:
		return nil, fmt.Errorf("negative size %d: %w", size, ErrMalformed)
	case size > opts.MaxBytes:
		return nil, fmt.Errorf("%d bytes > cap %d: %w", size, opts.MaxBytes, ErrTooLarge)
	}
	if err := opts.Pages.check(); err != nil {
		return nil, err
	}
	release, err := admit(ctx, typ, size, &opts)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	defer recoverPanic(&err, string(typ))

	switch typ {
	case TypePDF:
		doc, err = extractPDF(ctx, r, size, &opts)
	case TypeDOCX:
		doc, err = extractDOCX(ctx, r, size, &opts)
	case TypeHTML, TypeMarkdown, TypeText:
		doc, err = extractMarkup(ctx, typ, r, size, &opts)
	default:
		return nil, fmt.Errorf("type %q: %w", typ, ErrUnsupported)
	}
	if err != nil {
		return nil, err
	}
	if doc.Type == TypeUnknown {
		doc.Type = typ
	}
	if doc.PageCount == 0 {
		doc.PageCount = len(doc.Pages)
	}
	return doc, finish(doc, &opts)
}

// admit waits for the parse's share of the memory budget (see Budget). It resolves the PDF
// engine first: the engine's memory cap is most of what a PDF is reckoned at.
func admit(ctx context.Context, typ Type, size int64, opts *Options) (release func(), err error) {
	switch typ {
	case TypePDF:
		if opts.PDF == nil {
			if opts.PDF, err = DefaultPDFEngine(); err != nil {
				return nil, err
			}
		}
	case TypeDOCX, TypeHTML, TypeMarkdown, TypeText:
	default:
		return nil, fmt.Errorf("type %q: %w", typ, ErrUnsupported)
	}
	budget := opts.Budget
	if budget == nil {
		budget = DefaultBudget()
	}
	return budget.Acquire(ctx, parseCost(typ, size, opts))
}

// extractMarkup handles the single-buffer formats: HTML, Markdown and plain text.
func extractMarkup(ctx context.Context, typ Type, r io.ReaderAt, size int64, opts *Options) (*Document, error) {
	data, err := readAll(r, size)
	if err != nil {
		return nil, err
	}
	enc, ok := detectText(data, false)
	if !ok {
		return nil, fmt.Errorf("%s: control bytes in text: %w", typ, ErrMalformed)
	}
	var warn string
	if enc.enc != nil && (typ != TypeHTML || enc.name != encWindows1252.name) { // HTML: its meta charset decides
		data = toUTF8(data, enc)
		warn = "text converted from " + enc.name + " to UTF-8"
	}
	if typ == TypeHTML && markdownFragment(data) {
		typ = TypeMarkdown
	}
	var doc *Document
	if typ == TypeHTML {
		if doc, err = extractHTML(ctx, data, opts); err != nil {
			return nil, err
		}
	} else {
		doc = extractText(typ, data)
	}
	if warn != "" {
		doc.Warnings = append(doc.Warnings, warn)
	}
	doc.Type = typ
	return doc, nil
}

// finish checks the caps every format shares and reports the final progress for formats that
// do not report per page.
func finish(doc *Document, opts *Options) error {
	if len(doc.Pages) > opts.MaxPages {
		return fmt.Errorf("%s: %d pages > cap %d: %w", doc.Type, len(doc.Pages), opts.MaxPages, ErrTooLarge)
	}
	total := 0
	for _, p := range doc.Pages {
		total += len(p.Text)
	}
	if total > opts.MaxTextLength {
		return fmt.Errorf("%s: %d bytes of text > cap %d: %w", doc.Type, total, opts.MaxTextLength, ErrTooLarge)
	}
	if doc.Type != TypePDF {
		opts.progress(len(doc.Pages), len(doc.Pages))
	}
	return nil
}

// readAll reads the whole of r, which the caller has bounded by MaxBytes.
func readAll(r io.ReaderAt, size int64) ([]byte, error) {
	buf := make([]byte, size)
	n, err := r.ReadAt(buf, 0)
	if int64(n) == size {
		return buf, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read %d of %d bytes: %w", n, size, ErrMalformed)
	}
	return nil, fmt.Errorf("read input: %w", err)
}

// recoverPanic turns a panic in a parser (ours or a library's) into ErrMalformed: no input may
// take the worker down.
func recoverPanic(err *error, what string) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("%s: parser panic: %v: %w", what, p, ErrMalformed)
	}
}

// pagesFrom builds numbered pages from raw texts, normalising each.
func pagesFrom(texts []string) []Page { return pagesFromNumber(1, texts) }

// pagesFromNumber builds pages numbered from first from raw texts, normalising each.
func pagesFromNumber(first int, texts []string) []Page {
	pages := make([]Page, len(texts))
	for i, t := range texts {
		pages[i] = Page{Number: first + i, Text: Normalize(t)}
	}
	return pages
}
