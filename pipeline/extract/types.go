package extract

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Type is a document type recognised from its bytes.
type Type string

// The accepted document types. TypeUnknown is never returned with a nil error.
const (
	TypeUnknown  Type = ""
	TypePDF      Type = "pdf"
	TypeDOCX     Type = "docx"
	TypeHTML     Type = "html"
	TypeMarkdown Type = "markdown"
	TypeText     Type = "text"
)

// MIME returns the media type to store and serve for t ("" for TypeUnknown).
func (t Type) MIME() string {
	switch t {
	case TypePDF:
		return "application/pdf"
	case TypeDOCX:
		return "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	case TypeHTML:
		return "text/html; charset=utf-8"
	case TypeMarkdown:
		return "text/markdown; charset=utf-8"
	case TypeText:
		return "text/plain; charset=utf-8"
	}
	return ""
}

// Sentinel errors. Each one means the input itself is at fault, so a job that gets one fails
// permanently; test with errors.Is. Errors are wrapped with context ("pdf: page 3: ...").
var (
	// ErrUnsupported: not one of the accepted types (or a ZIP that is not a DOCX).
	ErrUnsupported = errors.New("unsupported document type")
	// ErrEmpty: a zero-byte input. It wraps ErrUnsupported.
	ErrEmpty = fmt.Errorf("%w: empty input", ErrUnsupported)
	// ErrMalformed: the type is right but the file is broken, truncated or hostile.
	ErrMalformed = errors.New("malformed document")
	// ErrEncrypted: the document needs a password.
	ErrEncrypted = errors.New("encrypted document")
	// ErrTooLarge: a size, page, entry or memory cap was exceeded.
	ErrTooLarge = errors.New("document exceeds limits")
	// ErrTimeout: the per-document deadline passed while parsing.
	ErrTimeout = errors.New("document parsing timed out")
	// ErrTooSlow: the document used more CPU time than its limit (set by the caller, such as
	// a sandbox's; Extract itself bounds wall time only).
	ErrTooSlow = errors.New("document exceeds its CPU time limit")
)

// Reason returns a short, stable reason code for err, for the job record and the tenant:
// "unsupported_type", "malformed", "encrypted", "too_large", "too_slow", "timeout"; "" when err is nil or
// is not one of the sentinels (a transient error the caller may retry).
func Reason(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrUnsupported):
		return "unsupported_type"
	case errors.Is(err, ErrEncrypted):
		return "encrypted"
	case errors.Is(err, ErrTooLarge):
		return "too_large"
	case errors.Is(err, ErrTooSlow):
		return "too_slow"
	case errors.Is(err, ErrTimeout):
		return "timeout"
	case errors.Is(err, ErrMalformed):
		return "malformed"
	}
	return ""
}

// Permanent reports whether err is one of the sentinel errors, i.e. retrying cannot help.
func Permanent(err error) bool { return Reason(err) != "" }

// Page is the text of one page, numbered from 1.
type Page struct {
	Number int
	Text   string
}

// Document is the result of Extract.
type Document struct {
	// Type is the type that was extracted: the type Extract was given, except that "HTML" that
	// is Markdown opening with an HTML block (a README, read whole) is TypeMarkdown.
	Type Type
	// Pages holds the text of each page in order. Formats without pages (HTML, Markdown, text)
	// have one page, or one per form feed in plain text. DOCX pages are split at explicit and
	// last-rendered page breaks.
	Pages []Page
	// Warnings are non-fatal findings, such as "no text layer; OCR needed".
	Warnings []string
	// Title comes from document metadata, the HTML <title>, or the first heading, when there is one.
	// It is at most MaxTitleBytes, cut on a rune boundary.
	Title string
	// ActiveContent is set when a PDF carries JavaScript, an open action, a launch action or
	// embedded files. The text is still extracted; the flag is for the caller's policy.
	ActiveContent bool
	// PageCount is how many pages the document has: len(Pages), except for a PDF extracted
	// with a page range or counted (Options.Pages, Options.CountPages), where it is all of
	// them.
	PageCount int
}

// Text returns the text of all pages that have any, joined by blank lines.
func (d *Document) Text() string {
	n := 0
	for _, p := range d.Pages {
		n += len(p.Text) + 2
	}
	b := make([]byte, 0, n)
	for _, p := range d.Pages {
		if p.Text == "" {
			continue
		}
		if len(b) > 0 {
			b = append(b, "\n\n"...)
		}
		b = append(b, p.Text...)
	}
	return string(b)
}

// Defaults for Options fields left zero.
const (
	DefaultMaxBytes      = 256 << 20
	DefaultMaxPages      = 2000
	DefaultTimeout       = 2 * time.Minute
	DefaultMaxEntries    = 5000
	DefaultMaxEntrySize  = 64 << 20
	DefaultMaxTotalSize  = 512 << 20
	DefaultMaxRatio      = 200
	DefaultMaxXMLDepth   = 256
	DefaultMaxTextLength = 64 << 20
)

// Options are the limits and hooks of one Extract call. The zero value is usable: every zero
// limit takes its Default value.
type Options struct {
	// MaxBytes caps the input size (default DefaultMaxBytes); larger input is ErrTooLarge.
	MaxBytes int64
	// MaxPages caps the page count (default DefaultMaxPages); more pages is ErrTooLarge.
	MaxPages int
	// Timeout bounds the parse when ctx has no earlier deadline (default DefaultTimeout).
	// Past the deadline Extract returns ErrTimeout; a stuck PDF engine call is killed.
	Timeout time.Duration
	// MaxTextLength caps the extracted text in bytes (default DefaultMaxTextLength).
	MaxTextLength int
	// DOCX bounds the ZIP container and its XML (zero fields take defaults).
	DOCX DOCXLimits
	// PDF is the engine to parse PDFs with; nil uses DefaultPDFEngine.
	PDF *PDFEngine
	// Budget admits the parse against a memory budget shared with other parses; nil uses
	// DefaultBudget. Extract waits for its share before the Timeout starts.
	Budget *Budget
	// Progress, when set, is called with the pages parsed so far and the page total, from the
	// goroutine doing the work, never after Extract returns.
	Progress func(done, total int)
	// OCR, when set, reads PDF pages without a text layer by OCR (see OCRConfig); nil leaves
	// them empty, with the warning WarnNoTextLayer.
	OCR *OCRConfig
	// Pages, when set, has a PDF's pages outside the range neither loaded nor extracted: the
	// Document holds the range's pages only, under their real numbers, and progress counts
	// them. Other formats ignore it.
	Pages PageRange
	// CountPages has Extract only count a PDF's pages (Document.PageCount, its title and
	// warnings, no Pages): what a caller needs to split a long document into ranges.
	CountPages bool
}

// PageRange is a range of page numbers, 1-based and inclusive. The zero value is every page;
// a zero Last runs to the last page, and a Last past the end stops there.
type PageRange struct {
	First, Last int
}

// IsZero reports whether r is every page.
func (r PageRange) IsZero() bool { return r == PageRange{} }

// check returns an error for a negative or reversed range.
func (r PageRange) check() error {
	if r.First < 0 || r.Last < 0 || (r.Last > 0 && r.Last < max(r.First, 1)) {
		return fmt.Errorf("page range %d-%d: first and last must be positive, first <= last", r.First, r.Last)
	}
	return nil
}

// bounds returns the 0-based, half-open indexes of r's pages in a document of n pages; from
// equals to when r holds none of them.
func (r PageRange) bounds(n int) (from, to int) {
	from, to = max(r.First, 1)-1, n
	if r.Last > 0 {
		to = min(r.Last, n)
	}
	return min(from, to), to
}

// DOCXLimits bounds what a DOCX container may claim and hold.
type DOCXLimits struct {
	// MaxEntries caps the ZIP's entry count, as claimed by its central directory
	// (default DefaultMaxEntries).
	MaxEntries int
	// MaxEntrySize caps any entry's uncompressed size, claimed or real (default DefaultMaxEntrySize).
	MaxEntrySize int64
	// MaxTotalSize caps the sum of claimed uncompressed sizes (default DefaultMaxTotalSize).
	MaxTotalSize int64
	// MaxRatio caps an entry's compression ratio once it is over 1 MiB (default DefaultMaxRatio).
	MaxRatio int64
	// MaxXMLDepth caps element nesting in document.xml (default DefaultMaxXMLDepth).
	MaxXMLDepth int
}

func (l DOCXLimits) withDefaults() DOCXLimits {
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxEntrySize <= 0 {
		l.MaxEntrySize = DefaultMaxEntrySize
	}
	if l.MaxTotalSize <= 0 {
		l.MaxTotalSize = DefaultMaxTotalSize
	}
	if l.MaxRatio <= 0 {
		l.MaxRatio = DefaultMaxRatio
	}
	if l.MaxXMLDepth <= 0 {
		l.MaxXMLDepth = DefaultMaxXMLDepth
	}
	return l
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxPages <= 0 {
		o.MaxPages = DefaultMaxPages
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxTextLength <= 0 {
		o.MaxTextLength = DefaultMaxTextLength
	}
	o.DOCX = o.DOCX.withDefaults()
	if o.OCR != nil {
		ocr := o.OCR.withDefaults()
		o.OCR = &ocr
	}
	return o
}

// progress reports to o.Progress when it is set.
func (o *Options) progress(done, total int) {
	if o.Progress != nil {
		o.Progress(done, total)
	}
}

// deadlineErr turns a context error into ErrTimeout when the deadline passed, and returns any
// other context error (a cancellation: not the document's fault) as is.
func deadlineErr(ctx context.Context, what string) error {
	err := ctx.Err()
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", what, ErrTimeout)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// MaxTitleBytes caps Document.Title: a longer title is cut, on a rune boundary, as it is read.
const MaxTitleBytes = 1024
