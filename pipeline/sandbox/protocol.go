package sandbox

import (
	"time"

	"github.com/docketq/docket/pipeline/analyze"
	"github.com/docketq/docket/pipeline/extract"
)

// The child's protocol: the parent writes a request, then the document's
// bytes in dataChunk pieces; the child answers with progress messages, the
// chunks in batches when the request asks for them, and one result. Both
// directions are one gob stream each.

// dataChunk is the most a data message carries.
const dataChunk = 1 << 20

// request asks the child to process one document.
type request struct {
	Type extract.Type
	Size int64
	// The extract.Options limits; the engine, budget and hooks are the
	// child's own.
	MaxBytes      int64
	MaxPages      int
	Timeout       time.Duration
	MaxTextLength int
	DOCX          extract.DOCXLimits
	// PDFMemoryLimit and PDFCacheDir configure the child's PDF engine.
	PDFMemoryLimit int64
	PDFCacheDir    string
	// OCR is extract.Options.OCR: its tesseract runs as the child's own child.
	OCR *extract.OCRConfig
	// Pages and CountPages are extract.Options': the child extracts only
	// the range's pages of a PDF, or only counts them.
	Pages      extract.PageRange
	CountPages bool
	// Chunking, when set, has the child split the text into chunks and
	// send them in batches instead of the pages' text.
	Chunking *Chunking
}

// requestOf returns the request for a document of typ, size bytes, parsed
// with opts's limits and the pool's PDF settings.
func requestOf(typ extract.Type, size int64, opts *extract.Options, cfg *Config, ch *Chunking) *request {
	return &request{Chunking: ch,
		Type: typ, Size: size,
		MaxBytes: opts.MaxBytes, MaxPages: opts.MaxPages, Timeout: opts.Timeout,
		MaxTextLength: opts.MaxTextLength, DOCX: opts.DOCX,
		PDFMemoryLimit: cfg.PDFMemoryLimit, PDFCacheDir: cfg.PDFCacheDir, OCR: opts.OCR,
		Pages: opts.Pages, CountPages: opts.CountPages,
	}
}

// options returns the extract options of r.
func (r *request) options() extract.Options {
	return extract.Options{
		MaxBytes: r.MaxBytes, MaxPages: r.MaxPages, Timeout: r.Timeout,
		MaxTextLength: r.MaxTextLength, DOCX: r.DOCX, OCR: r.OCR,
		Pages: r.Pages, CountPages: r.CountPages,
	}
}

// data is a piece of the document.
type data struct {
	Bytes []byte
}

// message is one answer of the child: exactly one field is set.
type message struct {
	Ready    *ready
	Progress *progress
	Text     *text
	Batch    *batch
	Result   *result
}

// progress is the parse's (pages), or with Chunking the splitter's (bytes).
type progress struct {
	Done, Total int
	Chunking    bool
}

// batch is one Batch of chunks, as encodeBatch makes it, holding N chunks.
type batch struct {
	Data []byte
	N    int
}

// text is a piece of a page's text, at most dataChunk bytes: a result's
// pages come ahead of it in pieces, so that no message, and no buffer of
// the parent's decoder, is the size of the document's text. Size, the
// page's whole length, lets the parent allocate the page once.
type text struct {
	Page, Size int
	S          string
}

// Result is what processing a document found.
type Result struct {
	Doc    *extract.Document // the text, page by page, title, warnings
	Fields analyze.Fields    // analyze.Analyze of Doc's pages, with its title
	// Chunks, when the caller asked for Chunking, are the text's chunks;
	// Doc's pages then hold their numbers but no text. The caller closes it.
	Chunks *Chunks // never sent: the parent makes it of the batches
	// ChunkCount is how many chunks the child sent (the wire's check).
	ChunkCount int
}

// result is the outcome of one document in a child: Result, or Err with
// Reason, extract.Reason of the error ("" when it is not the document's
// fault).
type result struct {
	Result *Result
	Err    string
	Reason string
	// Grown is how far the child's address space has grown since it
	// started: the parent replaces a child that grew past half its
	// allowance (see proc.spent).
	Grown int64
}
