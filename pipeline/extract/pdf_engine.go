package extract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// Defaults for PDFConfig fields left zero.
const (
	DefaultPDFMemoryLimit = 512 << 20
	// killGrace is how long a killed call may take to notice that its module is closed.
	killGrace = 5 * time.Second
)

// PDFConfig configures a PDFEngine. The zero value is usable.
type PDFConfig struct {
	// Instances caps the PDFium instances alive at once, i.e. PDFs parsed in parallel
	// (default GOMAXPROCS). Extract waits for a free instance.
	Instances int
	// MemoryLimit caps each instance's WebAssembly memory, in bytes, rounded down to 64 KiB
	// pages (default DefaultPDFMemoryLimit). A document that needs more fails with ErrTooLarge.
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
// switch: a call still running at the document's deadline has its module closed and its
// instance discarded and replaced. Safe for concurrent use.
type PDFEngine struct {
	pool     pdfium.Pool
	cache    wazero.CompilationCache
	memLimit int64
	reuse    bool
	kills    atomic.Int64
	closeMu  sync.Mutex
	closed   bool

	arenaMu sync.Mutex
	arenas  map[api.Module]*arena // instance memories moved out of the Go heap
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
	e := &PDFEngine{memLimit: int64(pages) << 16, reuse: cfg.ReuseInstances, arenas: map[api.Module]*arena{}}
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
	e.arenaMu.Lock()
	defer e.arenaMu.Unlock()
	for mod, a := range e.arenas { // reused instances, closed with the pool
		a.free()
		delete(e.arenas, mod)
	}
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
type pdfCall func(inst pdfium.Pdfium) (broken bool, err error)

// run borrows an instance and runs call on it until call returns or ctx is done. At ctx's end
// the instance's module is closed, which stops the WebAssembly code at its next check, and the
// instance is killed; so is an instance whose call reports it broken (a trap, a panic).
func (e *PDFEngine) run(ctx context.Context, call pdfCall) error {
	inst, err := e.pool.GetInstanceWithContext(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("pdf: waiting for an engine instance: %w", ctx.Err())
		}
		return fmt.Errorf("pdf: engine: %w", err)
	}
	mod := moduleOf(inst)
	e.placeMemory(mod)
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
		res.broken, res.err = call(inst)
	}()
	select {
	case res := <-done:
		if res.broken {
			err := e.memoryErr(mod, res.err)
			e.kill(inst, nil, nil)
			e.dropMemory(mod, nil)
			return err
		}
		_ = inst.Close() // returns (or, by default, discards) the instance whatever it says
		if !e.reuse {
			e.dropMemory(mod, nil)
		}
		return res.err
	case <-ctx.Done():
		finished := make(chan struct{})
		e.kill(inst, mod, func() bool {
			select {
			case <-done:
				close(finished)
				return true
			case <-time.After(killGrace):
				go func() { <-done; close(finished) }()
				return false
			}
		})
		e.dropMemory(mod, finished)
		return deadlineErr(ctx, "pdf")
	}
}

// placeMemory moves the memory of an instance's module into an arena before its first call.
func (e *PDFEngine) placeMemory(mod api.Module) {
	if mod == nil {
		return
	}
	e.arenaMu.Lock()
	defer e.arenaMu.Unlock()
	if _, ok := e.arenas[mod]; ok {
		return // a reused instance: moved already
	}
	if a := moveMemory(mod); a != nil {
		e.arenas[mod] = a
	}
}

// dropMemory frees the arena of a module that is closed, once finished is closed (nil: now).
// The module's code must have stopped: unmapping memory it still runs on would crash the process.
func (e *PDFEngine) dropMemory(mod api.Module, finished <-chan struct{}) {
	e.arenaMu.Lock()
	a, ok := e.arenas[mod]
	delete(e.arenas, mod)
	e.arenaMu.Unlock()
	if !ok {
		return
	}
	if finished == nil {
		a.free()
		return
	}
	select {
	case <-finished:
		a.free()
	default:
		go func() { <-finished; a.free() }()
	}
}

// kill stops inst. With its module at hand, it closes the module first (stopping a running
// call) and waits for the call's goroutine before discarding the instance, so the instance is
// never touched by two goroutines at once.
func (e *PDFEngine) kill(inst pdfium.Pdfium, mod api.Module, wait func() bool) {
	e.kills.Add(1)
	if mod != nil {
		_ = mod.CloseWithExitCode(context.Background(), 1)
	}
	if wait != nil {
		wait()
	}
	_ = inst.Kill()
}

// memoryErr reports a broken call as ErrTooLarge when its instance had grown past half its
// memory cap: a trap there is most likely an allocation that the cap refused (PDFium aborts).
func (e *PDFEngine) memoryErr(mod api.Module, err error) error {
	if mod == nil || !errors.Is(err, ErrMalformed) {
		return err
	}
	if mem := mod.Memory(); mem != nil && int64(mem.Size()) > e.memLimit/2 {
		return fmt.Errorf("pdf: instance memory cap %d bytes reached: %w", e.memLimit, ErrTooLarge)
	}
	return err
}

// moduleOf digs the wazero module out of a go-pdfium WebAssembly instance (its implementation's
// exported Module field), or returns nil if the library's shape changed. Closing the module is
// how a running call is stopped without racing on the instance's own fields.
func moduleOf(inst pdfium.Pdfium) (mod api.Module) {
	defer func() {
		if recover() != nil {
			mod = nil
		}
	}()
	v := reflect.ValueOf(inst.GetImplementation())
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil
	}
	f := v.Elem().FieldByName("Module")
	if !f.IsValid() || !f.CanInterface() {
		return nil
	}
	mod, _ = f.Interface().(api.Module)
	return mod
}
