package extract

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/responses"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
)

// Defaults for PDFConfig fields left zero.
const (
	// DefaultPDFMemoryLimit is an instance's memory cap, sized for a parse in process, where
	// an instance costs the process up to four times as much (see Budget). The sandbox's
	// children take their own memory limit as the cap.
	DefaultPDFMemoryLimit = 256 << 20
	// killGrace is how long a killed call may take to notice that its module is closed.
	killGrace = 5 * time.Second
)

// PDFConfig configures a PDFEngine. The zero value is usable.
type PDFConfig struct {
	// Instances caps the PDFium instances alive at once, i.e. PDFs parsed in parallel
	// (default GOMAXPROCS). Extract waits for a free instance.
	Instances int
	// MemoryLimit caps each instance's WebAssembly memory, in bytes, rounded down to 64 KiB
	// pages (default DefaultPDFMemoryLimit). PDFium gives up on what does not fit: the part of
	// the document that needed it is missing (a page's text, the title), or, where PDFium
	// cannot go on, the document fails as ErrMalformed. The memory lives in the Go heap and
	// grows by copying, so an instance costs the process up to four times MemoryLimit.
	MemoryLimit int64
	// CacheDir keeps wazero's compiled machine code between processes, so only the first start
	// on a machine pays for compiling PDFium (seconds). Default: <os.UserCacheDir>/docket/wazero,
	// else <os.TempDir>/docket-wazero. "off" disables the on-disk cache.
	CacheDir string
	// ReuseInstances keeps an instance for the next document after a clean parse. Off by
	// default: every document gets a fresh instance, so nothing of one document (heap state,
	// a parser bug it triggered) can reach the next.
	ReuseInstances bool
	// Stderr receives PDFium's diagnostic output (default discarded).
	Stderr io.Writer
}

// PDFEngine runs PDFium (WebAssembly, via wazero) in a pool of sandboxed instances: no host
// filesystem mounted (documents are passed as bytes), a memory cap per instance, and a kill
// switch: a call still running at the document's deadline is stopped and its instance
// discarded and replaced. Safe for concurrent use.
type PDFEngine struct {
	pool     pdfium.Pool
	cache    wazero.CompilationCache
	memLimit int64
	reuse    bool
	kills    atomic.Int64
	closeMu  sync.Mutex
	closed   bool
}

// NewPDFEngine compiles PDFium (or loads it from the compilation cache) and returns an engine.
// Instances start lazily. Close it when done.
func NewPDFEngine(cfg PDFConfig) (*PDFEngine, error) {
	if cfg.Instances <= 0 {
		cfg.Instances = runtime.GOMAXPROCS(0)
	}
	if cfg.MemoryLimit <= 0 {
		cfg.MemoryLimit = DefaultPDFMemoryLimit
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	pages := uint32(min(cfg.MemoryLimit>>16, 65536))
	rc := wazero.NewRuntimeConfig().WithMemoryLimitPages(pages).WithCloseOnContextDone(true)
	e := &PDFEngine{memLimit: int64(pages) << 16, reuse: cfg.ReuseInstances}
	if dir := cacheDir(cfg.CacheDir); dir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(dir)
		if err != nil {
			return nil, fmt.Errorf("pdf engine: compilation cache %s: %w", dir, err)
		}
		e.cache = cache
		rc = rc.WithCompilationCache(cache)
	}
	pool, err := webassembly.Init(webassembly.Config{
		MinIdle:       0,
		MaxIdle:       cfg.Instances,
		MaxTotal:      cfg.Instances,
		FSConfig:      wazero.NewFSConfig(), // nothing mounted: the default would mount "/"
		RuntimeConfig: rc,
		Stdout:        cfg.Stderr,
		Stderr:        cfg.Stderr,
		ReuseWorkers:  cfg.ReuseInstances,
	})
	if err != nil {
		e.closeCache()
		return nil, fmt.Errorf("pdf engine: %w", err)
	}
	e.pool = pool
	return e, nil
}

// cacheDir resolves PDFConfig.CacheDir; "" means no on-disk cache.
func cacheDir(dir string) string {
	switch dir {
	case "off":
		return ""
	case "":
		if base, err := os.UserCacheDir(); err == nil {
			return filepath.Join(base, "docket", "wazero")
		}
		return filepath.Join(os.TempDir(), "docket-wazero")
	}
	return dir
}

// Close stops the engine and frees its instances. Parses still running fail.
func (e *PDFEngine) Close() error {
	e.closeMu.Lock()
	defer e.closeMu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	err := e.pool.Close()
	e.closeCache()
	return err
}

func (e *PDFEngine) closeCache() {
	if e.cache != nil {
		_ = e.cache.Close(context.Background())
	}
}

// Kills returns how many instances were killed at a deadline or after a fault.
func (e *PDFEngine) Kills() int64 { return e.kills.Load() }

var (
	defaultEngineMu sync.Mutex
	defaultEngine   *PDFEngine
)

// DefaultPDFEngine returns the process-wide engine, creating it with a zero PDFConfig on first
// use. A failed start is not remembered: the next call tries again.
func DefaultPDFEngine() (*PDFEngine, error) {
	defaultEngineMu.Lock()
	defer defaultEngineMu.Unlock()
	if defaultEngine == nil {
		e, err := NewPDFEngine(PDFConfig{})
		if err != nil {
			return nil, err
		}
		defaultEngine = e
	}
	return defaultEngine, nil
}

// pdfCall is one document's work on one instance, run on its own goroutine.
type pdfCall func(inst pdfiumCalls) (broken bool, err error)

// pdfiumCalls is the part of PDFium's API that documents are parsed with. The calls go to the
// instance's implementation (go-pdfium's Pdfium.GetImplementation) rather than to the instance:
// the instance's own methods read state that Kill writes without a lock, so a call in flight
// and a kill at the deadline would race on it. The implementation's methods read none of it;
// Kill cancels the context they run under and closes their module.
type pdfiumCalls interface {
	OpenDocument(*requests.OpenDocument) (*responses.OpenDocument, error)
	FPDF_CloseDocument(*requests.FPDF_CloseDocument) (*responses.FPDF_CloseDocument, error)
	FPDF_GetPageCount(*requests.FPDF_GetPageCount) (*responses.FPDF_GetPageCount, error)
	FPDF_GetMetaText(*requests.FPDF_GetMetaText) (*responses.FPDF_GetMetaText, error)
	FPDF_GetSecurityHandlerRevision(*requests.FPDF_GetSecurityHandlerRevision) (*responses.FPDF_GetSecurityHandlerRevision, error)
	FPDFDoc_GetJavaScriptActionCount(*requests.FPDFDoc_GetJavaScriptActionCount) (*responses.FPDFDoc_GetJavaScriptActionCount, error)
	FPDFDoc_GetAttachmentCount(*requests.FPDFDoc_GetAttachmentCount) (*responses.FPDFDoc_GetAttachmentCount, error)
	FPDF_LoadPage(*requests.FPDF_LoadPage) (*responses.FPDF_LoadPage, error)
	FPDF_ClosePage(*requests.FPDF_ClosePage) (*responses.FPDF_ClosePage, error)
	FPDFPage_GetAnnotCount(*requests.FPDFPage_GetAnnotCount) (*responses.FPDFPage_GetAnnotCount, error)
	FPDFPage_Flatten(*requests.FPDFPage_Flatten) (*responses.FPDFPage_Flatten, error)
	FPDFText_LoadPage(*requests.FPDFText_LoadPage) (*responses.FPDFText_LoadPage, error)
	FPDFText_ClosePage(*requests.FPDFText_ClosePage) (*responses.FPDFText_ClosePage, error)
	FPDFText_CountChars(*requests.FPDFText_CountChars) (*responses.FPDFText_CountChars, error)
	FPDFText_GetText(*requests.FPDFText_GetText) (*responses.FPDFText_GetText, error)

	// Rendering a page for OCR (pdf_render.go).
	FPDF_GetPageWidthF(*requests.FPDF_GetPageWidthF) (*responses.FPDF_GetPageWidthF, error)
	FPDF_GetPageHeightF(*requests.FPDF_GetPageHeightF) (*responses.FPDF_GetPageHeightF, error)
	FPDFBitmap_CreateEx(*requests.FPDFBitmap_CreateEx) (*responses.FPDFBitmap_CreateEx, error)
	FPDFBitmap_Destroy(*requests.FPDFBitmap_Destroy) (*responses.FPDFBitmap_Destroy, error)
	FPDFBitmap_FillRect(*requests.FPDFBitmap_FillRect) (*responses.FPDFBitmap_FillRect, error)
	FPDF_RenderPageBitmap(*requests.FPDF_RenderPageBitmap) (*responses.FPDF_RenderPageBitmap, error)
	FPDFBitmap_GetStride(*requests.FPDFBitmap_GetStride) (*responses.FPDFBitmap_GetStride, error)
	FPDFBitmap_GetBuffer(*requests.FPDFBitmap_GetBuffer) (*responses.FPDFBitmap_GetBuffer, error)
}

// callsOf returns what inst's documents are parsed with: its implementation, or, should a
// version of go-pdfium not offer these calls there, the instance itself (correct, but a kill
// at the deadline then races with the call it stops).
func callsOf(inst pdfium.Pdfium) pdfiumCalls {
	if impl, ok := inst.GetImplementation().(pdfiumCalls); ok {
		return impl
	}
	return inst
}

// run borrows an instance and runs call on it until call returns or ctx is done. At ctx's end
// the instance is killed (Pdfium.Kill): that cancels the context its calls run under, which,
// with the runtime's WithCloseOnContextDone, stops the WebAssembly code at its next check, and
// closes its module. An instance whose call reports it broken (a trap, a panic) is killed too.
func (e *PDFEngine) run(ctx context.Context, call pdfCall) error {
	inst, err := e.pool.GetInstanceWithContext(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("pdf: waiting for an engine instance: %w", ctx.Err())
		}
		return fmt.Errorf("pdf: engine: %w", err)
	}
	calls := callsOf(inst)
	type result struct {
		broken bool
		err    error
	}
	done := make(chan result, 1)
	go func() {
		var res result
		defer func() {
			if p := recover(); p != nil {
				res = result{true, fmt.Errorf("pdf: engine panic: %v: %w", p, ErrMalformed)}
			}
			done <- res
		}()
		res.broken, res.err = call(calls)
	}()
	select {
	case res := <-done:
		if res.broken {
			e.kills.Add(1)
			_ = inst.Kill()
			return res.err
		}
		_ = inst.Close() // returns (or, by default, discards) the instance whatever it says
		return res.err
	case <-ctx.Done():
		e.kills.Add(1)
		_ = inst.Kill()
		select { // the call stops at its next check; one stuck in host code is left to finish
		case <-done:
		case <-time.After(killGrace):
		}
		return deadlineErr(ctx, "pdf")
	}
}
