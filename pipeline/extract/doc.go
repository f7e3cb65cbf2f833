// Package extract turns an uploaded document into normalised text, page by page.
//
// It is the "parsing" stage of the document pipeline. Three steps:
//
//  1. [Sniff] (or [SniffBytes]) decides the [Type] from the first 512 bytes. Magic bytes win over
//     any file name or Content-Type: only PDF, DOCX, HTML, Markdown and plain UTF-8 text are
//     accepted; everything else is [ErrUnsupported]. A ZIP is only a DOCX candidate until
//     [InspectDOCX] has seen word/document.xml in a sane archive.
//  2. [Extract] parses the document within [Options] limits (bytes, pages, the context's
//     deadline) and returns a [Document]: pages of text, warnings, a title, and whether a PDF
//     carries active content (JavaScript, an open action, a launch action, embedded files).
//  3. Every text passes through [Normalize]: NFKC, whitespace runs collapsed, words hyphenated
//     across a line break joined, paragraph breaks kept.
//
// PDFs are parsed by PDFium compiled to WebAssembly and run by wazero (pure Go, no cgo), inside a
// [PDFEngine]: a pool of sandboxed instances with a memory limit, no host filesystem, a compilation
// cache on disk, and a per-document deadline after which the instance running the document is
// killed (go-pdfium's Kill, with wazero closing the module on its context) and replaced. One
// engine is shared by default ([DefaultPDFEngine]); a worker can make its own with
// [NewPDFEngine] and pass it in [Options.PDF]. The engine uses go-pdfium's and wazero's
// supported APIs only.
//
// What the engine bounds in process, and what it does not: an instance's memory is capped
// ([PDFConfig.MemoryLimit]), but it lives in the Go heap and grows by copying, and PDFium hands
// metadata over whole (a 30 MB /Title is built in the instance and copied out), so a PDF costs
// the process up to four times the cap; the [Budget] reckons it so, and the default cap is
// sized for that (256 MiB). PDFium gives up on what does not fit in the cap, and where it
// cannot go on the document fails as [ErrMalformed]: in process a document too large for the
// engine is not told from a broken one. The CPU a parse takes is bounded only by its deadline.
// pipeline/sandbox parses each document in a child process whose memory, CPU time and wall
// clock the operating system and the parent bound, and reports too_large, too_slow or timeout;
// that is where hostile input is meant to be parsed.
//
// A PDF page without a text layer (a scan) is left empty with the warning [WarnNoTextLayer],
// unless [Options.OCR] is set: then PDFium renders it to a gray bitmap and Tesseract reads it, in
// a process of its own per page under the limits of [OCRConfig].
//
// Every parse is first admitted against a [Budget] of memory shared by the parses of a process
// ([DefaultBudget], or [Options.Budget]), at the most it can cost: parses wait while the budget
// is taken, and past the budget's wait Extract returns [ErrBusy], which the caller retries.
//
// Errors a caller must treat as a permanent failure of the input (no retry) are the sentinels
// [ErrUnsupported], [ErrMalformed], [ErrEncrypted], [ErrTooLarge] and [ErrTimeout]; [Reason]
// maps an error to a short reason code for the job record. Any other error (a canceled context,
// an engine that failed to start, ErrBusy) is the caller's to retry.
//
// No input makes this package panic: parsers are bounded by the caps in [Options] and recover
// from panics in third-party code, reporting them as [ErrMalformed].
package extract
