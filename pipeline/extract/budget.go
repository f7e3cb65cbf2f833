package extract

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Defaults for BudgetConfig fields left zero.
const (
	// DefaultMemoryBudget admits one PDF at the default engine cap (reckoned at about 1.2 GiB,
	// see Budget) beside smaller documents, or many smaller documents.
	DefaultMemoryBudget = 2 << 30
	// DefaultBudgetWait is how long a parse waits for its share before ErrBusy.
	DefaultBudgetWait = time.Minute
)

// ErrBusy is returned by Extract when the memory budget stayed taken for BudgetConfig.Wait. It
// is not the document's fault: the caller retries later.
var ErrBusy = errors.New("parse memory budget taken; try again later")

// BudgetConfig configures a Budget.
type BudgetConfig struct {
	// Bytes is the memory the parses sharing the budget may hold at once, as reckoned by their
	// worst case (default DefaultMemoryBudget).
	Bytes int64
	// Wait caps how long a parse waits to be admitted (default DefaultBudgetWait); past it,
	// Extract returns ErrBusy.
	Wait time.Duration
}

// Budget admits parses against a memory budget, first come first served. A parse is reckoned at
// the most it can cost the process, before it starts:
//
//   - PDF: pdfGrowth × its engine's MemoryLimit (an instance's WebAssembly memory, which
//     lives in the Go heap and grows by copying: the array it outgrew waits for the collector;
//     and the metadata PDFium hands over, copied out of it) + 2 × the input (the bytes read,
//     and PDFium's copy's bookkeeping) + 2 × MaxTextLength (the text as PDFium hands it over,
//     and as normalised);
//   - DOCX: 2 × the input + 2 × MaxTextLength (entries are inflated as streams, never whole);
//   - HTML, Markdown, text: 4 × the input (the bytes, the text, its normalised copy, the pages).
//
// A parse reckoned at more than the whole budget runs alone. Safe for concurrent use.
type Budget struct {
	size int64
	wait time.Duration

	mu      sync.Mutex
	used    int64
	waiters []*budgetWaiter // first come, first served
}

type budgetWaiter struct {
	n     int64
	ready chan struct{} // closed once admitted
}

// NewBudget returns a budget of cfg.Bytes.
func NewBudget(cfg BudgetConfig) *Budget {
	if cfg.Bytes <= 0 {
		cfg.Bytes = DefaultMemoryBudget
	}
	if cfg.Wait <= 0 {
		cfg.Wait = DefaultBudgetWait
	}
	return &Budget{size: cfg.Bytes, wait: cfg.Wait}
}

var (
	defaultBudgetOnce sync.Once
	defaultBudget     *Budget
)

// DefaultBudget returns the process-wide budget (DefaultMemoryBudget) that Extract uses when
// Options.Budget is nil.
func DefaultBudget() *Budget {
	defaultBudgetOnce.Do(func() { defaultBudget = NewBudget(BudgetConfig{}) })
	return defaultBudget
}

// Size returns the budget in bytes.
func (b *Budget) Size() int64 { return b.size }

// InUse returns the bytes held by admitted parses.
func (b *Budget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Waiting returns how many parses wait to be admitted.
func (b *Budget) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiters)
}

// Acquire takes n bytes of the budget (at most all of it), waiting behind earlier parses until
// they fit, ctx is done or the budget's wait has passed (ErrBusy). Call release once the work is
// over. Extract calls it for every parse; other memory-hungry work may share the budget too.
func (b *Budget) Acquire(ctx context.Context, n int64) (release func(), err error) {
	n = min(max(n, 0), b.size)
	release = func() { b.release(n) }
	b.mu.Lock()
	if len(b.waiters) == 0 && b.used+n <= b.size {
		b.used += n
		b.mu.Unlock()
		return release, nil
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()

	timer := time.NewTimer(b.wait)
	defer timer.Stop()
	select {
	case <-w.ready:
		return release, nil
	case <-ctx.Done():
		err = fmt.Errorf("waiting for the parse memory budget: %w", ctx.Err())
	case <-timer.C:
		err = fmt.Errorf("%d bytes wanted, %d of %d held, for %v: %w", n, b.InUse(), b.size, b.wait, ErrBusy)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.ready: // admitted meanwhile: give it back
		b.used -= n
	default:
		b.waiters = slices.DeleteFunc(b.waiters, func(x *budgetWaiter) bool { return x == w })
	}
	b.admit()
	return nil, err
}

func (b *Budget) release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	b.admit()
}

// admit lets in the waiters at the head of the line that fit.
func (b *Budget) admit() {
	for len(b.waiters) > 0 && b.used+b.waiters[0].n <= b.size {
		w := b.waiters[0]
		b.waiters = b.waiters[1:]
		b.used += w.n
		close(w.ready)
	}
}

// pdfGrowth is how many times its memory cap a PDFium instance may cost the process: the
// memory it grew to, the arrays it grew from that the collector has not yet reclaimed, and a
// title copied out of it. Measured: up to 3.9 times, a 1 GiB title stream parsed through a
// document job.
const pdfGrowth = 4

// Cost returns what Extract reckons a parse of a document of type typ and size bytes at, with
// opts (see Budget); nil opts.PDF means an engine with DefaultPDFMemoryLimit.
func Cost(typ Type, size int64, opts Options) int64 {
	opts = opts.withDefaults()
	return parseCost(typ, size, &opts)
}

// parseCost is Cost with opts defaulted.
func parseCost(typ Type, size int64, opts *Options) int64 {
	text := 2 * int64(opts.MaxTextLength)
	switch typ {
	case TypePDF:
		limit := int64(DefaultPDFMemoryLimit)
		if opts.PDF != nil {
			limit = opts.PDF.memLimit
		}
		if opts.OCR != nil { // a rendered page, and its copy on the way to tesseract
			text += 2 * int64(opts.OCR.MaxPixels)
		}
		return pdfGrowth*limit + 2*size + text
	case TypeDOCX:
		return 2*size + text
	}
	return 4 * size
}
