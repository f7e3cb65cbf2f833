package sandbox

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docketq/docket/pipeline/chunk"
	"github.com/docketq/docket/pipeline/extract"
)

// Defaults for Config fields left zero.
const (
	DefaultProcs         = 2
	DefaultMemoryLimit   = 1 << 30
	DefaultCPULimit      = 2 * time.Minute
	DefaultMaxDocuments  = 100
	DefaultWait          = time.Minute
	DefaultWatchInterval = 100 * time.Millisecond
	// startTimeout bounds a child's start, up to its first message.
	startTimeout = 30 * time.Second
	// wallGrace is how long past the parse's own timeout a child may take
	// to answer before it is killed: the parse stops itself at its
	// timeout; the grace covers the analysis and the answer.
	wallGrace = 30 * time.Second
)

// DefaultNice is Config.Nice's default: the lowest priority, so that
// parsing yields the CPU to requests at once (at nice 10 a tenant's long
// text still doubled other tenants' upload tail on two cores).
const DefaultNice = 19

// EnvNice names the environment variable that, when set, is the default
// Config.Nice. The test command sets it to 10: its packages keep both
// cores busy, and children at 19 barely ran.
const EnvNice = "DOCKET_SANDBOX_NICE"

// ErrTooSlow: the document used more CPU time than Config.CPULimit. It is
// the document's fault (extract.Reason gives "too_slow").
var ErrTooSlow = extract.ErrTooSlow

// Config configures a Pool. The zero value is usable.
type Config struct {
	// Procs caps the children alive at once, i.e. documents processed in
	// parallel (default DefaultProcs). Process waits for a free one.
	Procs int
	// MemoryLimit is what one child may use beyond what it had when it
	// started (resident memory, and address space with 128 MiB more;
	// default DefaultMemoryLimit). Procs × MemoryLimit bounds the pool's memory.
	MemoryLimit int64
	// CPULimit caps the CPU time of one document (default DefaultCPULimit).
	CPULimit time.Duration
	// MaxDocuments is how many documents a child processes before it is
	// replaced (default DefaultMaxDocuments). A child that failed a
	// document is always replaced.
	MaxDocuments int
	// Wait caps how long Process waits for a child (default DefaultWait);
	// past it, Process returns extract.ErrBusy.
	Wait time.Duration
	// WatchInterval is how often a child's CPU time, memory and the
	// caller's context are checked (default DefaultWatchInterval).
	WatchInterval time.Duration
	// PDFMemoryLimit and PDFCacheDir configure the children's PDF engine
	// (extract.PDFConfig's MemoryLimit and CacheDir). Zero PDFMemoryLimit:
	// MemoryLimit, so that the child's own limits stop a PDF that needs
	// too much memory, and it fails as too_large (PDFium cannot tell the
	// engine's cap from a fault of its own).
	PDFMemoryLimit int64
	PDFCacheDir    string
	// Path is the executable to run; it must call Main first and be the
	// same build as this process. Default: $DOCKET_SANDBOX_PATH when set,
	// else this process's own (os.Executable). The test command points
	// DOCKET_SANDBOX_PATH at a docket binary built without the race
	// detector, so that tests built with it do not parse every document
	// in an instrumented child.
	Path string
	// Logger receives a line for each child stopped for a limit or that
	// crashed. Default: discarded.
	Logger *slog.Logger
	// Nice is the children's nice value on Linux, 1 to 19 (default:
	// $DOCKET_SANDBOX_NICE when set, else DefaultNice). A child that a
	// busy machine leaves no CPU is still bounded by its wall clock.
	Nice int
	// SpoolDir holds, for ProcessChunked, a document's chunks between the
	// child and the caller, in a file removed as soon as it is opened for
	// reading (default: os.TempDir).
	SpoolDir string
}

func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Procs < 0, c.MemoryLimit < 0, c.CPULimit < 0, c.MaxDocuments < 0, c.Wait < 0, c.WatchInterval < 0:
		return c, errors.New("sandbox: negative limit")
	}
	if c.Procs == 0 {
		c.Procs = DefaultProcs
	}
	if c.MemoryLimit == 0 {
		c.MemoryLimit = DefaultMemoryLimit
	}
	if c.CPULimit == 0 {
		c.CPULimit = DefaultCPULimit
	}
	if c.MaxDocuments == 0 {
		c.MaxDocuments = DefaultMaxDocuments
	}
	if c.Wait == 0 {
		c.Wait = DefaultWait
	}
	if c.WatchInterval == 0 {
		c.WatchInterval = DefaultWatchInterval
	}
	if c.PDFMemoryLimit == 0 {
		c.PDFMemoryLimit = c.MemoryLimit
	}
	if c.Path == "" {
		c.Path = os.Getenv(EnvPath)
	}
	if v := os.Getenv(EnvNice); c.Nice == 0 && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return c, fmt.Errorf("sandbox: %s=%q: %w", EnvNice, v, err)
		}
		c.Nice = n
	}
	if c.Nice == 0 {
		c.Nice = DefaultNice
	}
	if c.Nice < 1 || c.Nice > 19 {
		return c, fmt.Errorf("sandbox: nice %d: want 1 to 19", c.Nice)
	}
	if c.Path == "" {
		exe, err := os.Executable()
		if err != nil {
			return c, fmt.Errorf("sandbox: own executable: %w", err)
		}
		c.Path = exe
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// EnvPath names the environment variable that, when set, is the default
// Config.Path.
const EnvPath = "DOCKET_SANDBOX_PATH"

// Pool runs documents in child processes, at most Config.Procs at once.
// Safe for concurrent use.
type Pool struct {
	cfg    Config
	ctx    context.Context // of the children; ended by Close
	stop   context.CancelFunc
	spawns chan spawnRequest // to the spawner goroutine
	slots  chan struct{}     // a token per child that may run
	mu     sync.Mutex
	idle   []*proc
	live   map[*proc]bool
	done   bool

	warmPDF sync.Once // the PDF engine's compilation cache, filled in this process
}

// NewPool checks cfg and returns a pool. Children start on first use.
func NewPool(cfg Config) (*Pool, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	p := &Pool{cfg: cfg, ctx: ctx, stop: stop, spawns: make(chan spawnRequest),
		slots: make(chan struct{}, cfg.Procs), live: map[*proc]bool{}}
	go spawner(ctx, p.spawns, cfg.Nice)
	for range cfg.Procs {
		p.slots <- struct{}{}
	}
	return p, nil
}

// Close stops the pool's children; documents still running fail.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.done = true
	live := make([]*proc, 0, len(p.live))
	for c := range p.live {
		live = append(live, c)
	}
	p.idle = nil
	p.mu.Unlock()
	p.stop()
	for _, c := range live {
		c.kill()
		<-c.exited
	}
	return nil
}

// Process extracts and analyses the document of type typ in r (size
// bytes) in a child, under opts's limits (its PDF engine, Budget and
// Progress are replaced: the child has its own engine, the pool is the
// budget, progress is relayed). Its errors are extract's: the document's
// fault (extract.Permanent: too_large for memory, too_slow for CPU time,
// timeout, malformed for a parser that crashed the child), extract.ErrBusy
// when no child came free within Config.Wait, ctx's error when it ended.
// When Process returns, the child that ran the document has stopped or
// is idle.
func (p *Pool) Process(ctx context.Context, typ extract.Type, r io.ReaderAt, size int64, opts extract.Options) (*Result, error) {
	return p.process(ctx, typ, r, size, opts, nil)
}

// ProcessChunked is Process, and the child then splits the text into
// chunks, with their vectors when ch.Dimensions is set, under the same
// limits: Result.Chunks hands them over a batch at a time from a
// temporary file in Config.SpoolDir, and Result.Doc's pages hold no text.
// This process never holds the document's text, and the child is free
// once it has sent the chunks. The caller closes Result.Chunks.
func (p *Pool) ProcessChunked(ctx context.Context, typ extract.Type, r io.ReaderAt, size int64, opts extract.Options, ch Chunking) (*Result, error) {
	ch, err := ch.withDefaults()
	if err != nil {
		return nil, err
	}
	return p.process(ctx, typ, r, size, opts, &ch)
}

func (p *Pool) process(ctx context.Context, typ extract.Type, r io.ReaderAt, size int64, opts extract.Options, ch *Chunking) (*Result, error) {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = extract.DefaultMaxBytes
	}
	if opts.Timeout <= 0 {
		opts.Timeout = extract.DefaultTimeout
	}
	if opts.MaxTextLength <= 0 {
		opts.MaxTextLength = extract.DefaultMaxTextLength
	}
	switch {
	case size == 0:
		return nil, extract.ErrEmpty
	case size < 0:
		return nil, fmt.Errorf("negative size %d: %w", size, extract.ErrMalformed)
	case size > opts.MaxBytes:
		return nil, fmt.Errorf("%d bytes > cap %d: %w", size, opts.MaxBytes, extract.ErrTooLarge)
	}
	if typ == extract.TypePDF {
		p.warmPDF.Do(p.compilePDF)
	}
	if err := p.acquire(ctx); err != nil {
		return nil, err
	}
	defer func() { p.slots <- struct{}{} }()
	c, err := p.take()
	if err != nil {
		return nil, err
	}
	res, err := c.run(ctx, &p.cfg, requestOf(typ, size, &opts, &p.cfg, ch), r, opts.Progress, ch)
	p.put(c, err == nil && c.healthy() && !c.spent(p.cfg.MemoryLimit))
	return res, err
}

// compilePDF compiles PDFium into the compilation cache the children load
// it from. Compiling is trusted work on Docket's own module, and takes more
// memory than a child may have: done in a child, the first PDF on a machine
// failed as too large. A failure is logged; the children then compile.
func (p *Pool) compilePDF() {
	e, err := extract.NewPDFEngine(extract.PDFConfig{Instances: 1, MemoryLimit: p.cfg.PDFMemoryLimit, CacheDir: p.cfg.PDFCacheDir})
	if err != nil {
		p.cfg.Logger.Warn("sandbox: compiling the PDF engine for the children", "err", err)
		return
	}
	_ = e.Close() // the compiled code stays in the cache
}

// acquire waits for a slot, up to Config.Wait.
func (p *Pool) acquire(ctx context.Context) error {
	select {
	case <-p.slots:
		return nil
	default:
	}
	t := time.NewTimer(p.cfg.Wait)
	defer t.Stop()
	select {
	case <-p.slots:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sandbox: waiting for a child: %w", ctx.Err())
	case <-t.C:
		return fmt.Errorf("sandbox: %d children busy for %s: %w", p.cfg.Procs, p.cfg.Wait, extract.ErrBusy)
	}
}

// take returns an idle child, or starts one.
func (p *Pool) take() (*proc, error) {
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		return nil, errors.New("sandbox: pool closed")
	}
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	c, err := start(p.ctx, p.spawns, &p.cfg)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		c.kill()
		return nil, errors.New("sandbox: pool closed")
	}
	p.live[c] = true
	return c, nil
}

// put keeps c for the next document when it is healthy and has documents
// left, and stops it otherwise.
func (p *Pool) put(c *proc, keep bool) {
	c.docs++
	p.mu.Lock()
	keep = keep && !p.done && c.docs < p.cfg.MaxDocuments
	if keep {
		p.idle = append(p.idle, c)
	} else {
		delete(p.live, c)
	}
	p.mu.Unlock()
	if !keep {
		c.stop()
	}
}

// proc is one child process.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	bw     *bufio.Writer
	enc    *gob.Encoder
	dec    *gob.Decoder
	stderr *stderrLog
	logger *slog.Logger
	exited chan struct{} // closed once the child has exited and been reaped
	base   int64         // resident memory once ready
	docs   int
	grown  int64 // the address space the child has mapped since it started

	mu     sync.Mutex
	killed error // why the parent killed the child, when it did
}

// start runs a child and waits for its first message. The child is killed
// when ctx ends (the pool's, ended by Close).
func start(ctx context.Context, spawns chan<- spawnRequest, cfg *Config) (*proc, error) {
	cmd := exec.CommandContext(ctx, cfg.Path)
	cmd.Env = childEnv(cfg.MemoryLimit)
	cmd.SysProcAttr = childAttr()
	c := &proc{cmd: cmd, stderr: &stderrLog{max: 4 << 10}, logger: cfg.Logger, exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if err := spawn(ctx, spawns, cmd); err != nil {
		return nil, fmt.Errorf("sandbox: start %s: %w", cfg.Path, err)
	}
	c.stdin, c.bw = stdin, bufio.NewWriterSize(stdin, 64<<10)
	c.enc, c.dec = gob.NewEncoder(c.bw), gob.NewDecoder(bufio.NewReader(stdout))
	go func() {
		_ = cmd.Wait() // its ProcessState tells how it ended
		close(c.exited)
	}()
	first := make(chan error, 1)
	go func() {
		var m message
		err := c.dec.Decode(&m)
		if err == nil && m.Ready == nil {
			err = errors.New("first message is not ready")
		}
		first <- err
	}()
	t := time.NewTimer(startTimeout)
	defer t.Stop()
	select {
	case err = <-first:
	case <-t.C:
		err = fmt.Errorf("no answer within %s", startTimeout)
	}
	if err != nil {
		c.kill()
		<-c.exited
		cfg.Logger.Error("sandbox child did not start", "path", cfg.Path, "err", err, "stderr", c.stderr.String())
		return nil, fmt.Errorf("sandbox: child did not start (does its main call sandbox.Main first?): %w", err)
	}
	if _, rss, err := usage(cmd.Process.Pid); err == nil {
		c.base = rss
	}
	return c, nil
}

// spawnRequest asks the spawner to start cmd.
type spawnRequest struct {
	cmd  *exec.Cmd
	done chan<- error
}

// spawn has the spawner start cmd, unless ctx ends first.
func spawn(ctx context.Context, spawns chan<- spawnRequest, cmd *exec.Cmd) error {
	done := make(chan error, 1)
	select {
	case spawns <- spawnRequest{cmd, done}:
		return <-done
	case <-ctx.Done():
		return ctx.Err()
	}
}

// childEnv is a child's whole environment: the marker, its memory limit,
// and where caches and temporary files go. Nothing else of the parent's
// (database URLs, keys) reaches it.
func childEnv(memory int64) []string {
	env := []string{envChild + "=1", envMemory + "=" + strconv.FormatInt(memory, 10), "GOTRACEBACK=none"}
	for _, k := range []string{"HOME", "TMPDIR", "XDG_CACHE_HOME"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// run sends one document to the child and waits for its result, killing
// the child when a limit is passed or ctx ends.
func (c *proc) run(ctx context.Context, cfg *Config, req *request, r io.ReaderAt, onProgress func(done, total int), ch *Chunking) (*Result, error) {
	watchDone := make(chan struct{})
	defer close(watchDone)
	go c.watch(ctx, cfg, req.Timeout+wallGrace, watchDone)
	sent := make(chan error, 1)
	go func() { sent <- c.send(req, r) }()
	var (
		pages []strings.Builder // the result's text, as it comes
		sp    *spool            // the chunks, as they come
	)
	defer func() {
		if sp != nil {
			sp.discard() // unless handed over, below
		}
	}()
	for {
		var m message
		if err := c.dec.Decode(&m); err != nil {
			c.kill()
			<-c.exited
			return nil, c.failure(ctx, <-sent, err)
		}
		switch {
		case m.Progress != nil && m.Progress.Chunking:
			if ch != nil && ch.Chunk.Progress != nil {
				ch.Chunk.Progress(m.Progress.Done, m.Progress.Total)
			}
		case m.Progress != nil && onProgress != nil:
			onProgress(m.Progress.Done, m.Progress.Total)
		case m.Batch != nil:
			if ch == nil || m.Batch.N <= 0 || m.Batch.N > ch.Batch {
				c.kill()
				<-c.exited
				return nil, fmt.Errorf("sandbox: child sent a batch of %d chunks unasked: %w", m.Batch.N, extract.ErrMalformed)
			}
			if sp == nil {
				var err error
				if sp, err = newSpool(cfg.SpoolDir, spoolLimit(req)); err != nil {
					c.kill()
					<-c.exited
					return nil, err
				}
			}
			if err := sp.add(m.Batch.Data, m.Batch.N); err != nil {
				c.kill()
				<-c.exited
				return nil, err
			}
		case m.Text != nil:
			t := m.Text
			if t.Page < len(pages)-1 || t.Page > len(pages) || t.Size < 0 || t.Size > req.MaxTextLength {
				c.kill()
				<-c.exited
				return nil, fmt.Errorf("sandbox: child sent page %d of %d bytes out of order: %w", t.Page, t.Size, extract.ErrMalformed)
			}
			if t.Page == len(pages) {
				pages = append(pages, strings.Builder{})
				pages[t.Page].Grow(t.Size)
			}
			pages[t.Page].WriteString(t.S)
		case m.Result != nil:
			if err := <-sent; err != nil { // cannot be: the child read it all
				c.kill()
				return nil, fmt.Errorf("sandbox: sending the document: %w", err)
			}
			c.grown = m.Result.Grown
			if m.Result.Err != "" {
				return nil, resultError(m.Result)
			}
			res := m.Result.Result
			if res == nil || res.Doc == nil || len(pages) > len(res.Doc.Pages) {
				c.kill()
				<-c.exited
				return nil, fmt.Errorf("sandbox: child sent text of %d pages with no such result: %w", len(pages), extract.ErrMalformed)
			}
			for i := range pages {
				res.Doc.Pages[i].Text = pages[i].String()
			}
			if ch != nil {
				if sp == nil { // no batch: a document without text
					if res.ChunkCount != 0 {
						return nil, fmt.Errorf("sandbox: child announced %d chunks and sent none: %w", res.ChunkCount, extract.ErrMalformed)
					}
					res.Chunks = noChunks()
					return res, nil
				}
				chunks, err := sp.reader(res.ChunkCount)
				sp = nil // handed over, or discarded
				if err != nil {
					return nil, err
				}
				res.Chunks = chunks
			}
			return res, nil
		}
	}
}

// spoolLimit bounds what a child may spool for req: the chunks' text, at
// most the document's text again for each overlap, and a vector and some
// framing per chunk, for as many chunks as the text could make.
func spoolLimit(req *request) int64 {
	ch := req.Chunking
	text := int64(req.MaxTextLength)
	if text <= 0 {
		text = extract.DefaultMaxTextLength
	}
	pages := int64(req.MaxPages)
	if pages <= 0 {
		pages = extract.DefaultMaxPages
	}
	stride := int64(ch.Chunk.Size - ch.Chunk.Overlap)
	if ch.Chunk.Size == 0 {
		stride = chunk.DefaultWordSize - int64(ch.Chunk.Overlap)
	}
	stride = max(stride, 1)
	chunks := text/stride + pages + 1
	return 3*text + chunks*(int64(ch.Dimensions)*4+128) + 1<<20
}

// send writes the request and the document's bytes.
func (c *proc) send(req *request, r io.ReaderAt) error {
	if err := c.enc.Encode(req); err != nil {
		return err
	}
	buf := make([]byte, min(req.Size, dataChunk))
	for off := int64(0); off < req.Size; {
		n, err := r.ReadAt(buf[:min(int64(len(buf)), req.Size-off)], off)
		if n > 0 {
			if err := c.enc.Encode(&data{Bytes: buf[:n]}); err != nil {
				return err
			}
			off += int64(n)
			continue
		}
		if err == nil || errors.Is(err, io.EOF) {
			err = fmt.Errorf("read %d of %d bytes: %w", off, req.Size, extract.ErrMalformed)
		}
		return errRead{err}
	}
	return c.bw.Flush()
}

// errRead is the document's reader failing, as opposed to the child's pipe.
type errRead struct{ error }

func (e errRead) Unwrap() error { return e.error }

// watch kills the child when ctx ends, at the wall deadline, or when the
// document's CPU time or the child's memory passes its limit.
func (c *proc) watch(ctx context.Context, cfg *Config, wall time.Duration, done <-chan struct{}) {
	pid := c.cmd.Process.Pid
	cpu0, _, usageErr := usage(pid)
	deadline := time.NewTimer(wall)
	defer deadline.Stop()
	tick := time.NewTicker(cfg.WatchInterval)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-c.exited:
			return
		case <-ctx.Done():
			c.killFor(ctx.Err())
			return
		case <-deadline.C:
			c.killFor(fmt.Errorf("no result after %s: %w", wall, extract.ErrTimeout))
			return
		case <-tick.C:
		}
		if usageErr != nil {
			continue
		}
		cpu, rss, err := usage(pid)
		switch {
		case err != nil: // exited meanwhile
		case cpu-cpu0 > cfg.CPULimit:
			c.killFor(fmt.Errorf("%s of CPU time > limit %s: %w", (cpu - cpu0).Round(time.Millisecond), cfg.CPULimit, ErrTooSlow))
			return
		case rss-c.base > cfg.MemoryLimit:
			c.killFor(fmt.Errorf("%d MiB of memory > limit %d MiB: %w", rss>>20, (c.base+cfg.MemoryLimit)>>20, extract.ErrTooLarge))
			return
		}
	}
}

// killFor kills the child, remembering why.
func (c *proc) killFor(why error) {
	c.mu.Lock()
	if c.killed == nil {
		c.killed = why
	}
	c.mu.Unlock()
	c.kill()
}

func (c *proc) kill() { _ = c.cmd.Process.Kill() }

// healthy reports whether the child is still running and was not killed.
func (c *proc) healthy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.exited:
		return false
	default:
		return c.killed == nil
	}
}

// spent reports whether c has used half of its memory allowance for good:
// what a document mapped stays mapped in the child, and counts against
// its address-space cap, so a child reused after a large document could
// fail the next one, perhaps another tenant's small one, as too large.
// Such a child is replaced.
func (c *proc) spent(limit int64) bool { return c.grown > limit/2 }

// stop ends an idle child: its input closes and it exits; one that does
// not within a second is killed.
func (c *proc) stop() {
	_ = c.stdin.Close()
	select {
	case <-c.exited:
	case <-time.After(time.Second):
		c.kill()
		<-c.exited
	}
}

// failure explains a child that stopped before its result: the limit it
// was killed for, the caller's context, the document's reader, or how it
// died.
func (c *proc) failure(ctx context.Context, sendErr, readErr error) error {
	c.mu.Lock()
	killed := c.killed
	c.mu.Unlock()
	var re errRead
	switch {
	case killed != nil && ctx.Err() != nil && errors.Is(killed, ctx.Err()):
		return fmt.Errorf("sandbox: %w", ctx.Err())
	case killed != nil:
		return fmt.Errorf("sandbox: child stopped: %w", killed)
	case errors.As(sendErr, &re):
		return fmt.Errorf("sandbox: %w", re.error)
	}
	out := c.stderr.String()
	how := "exited"
	if st := c.cmd.ProcessState; st != nil {
		how = st.String()
	}
	// What the child wrote is the operator's to read, not the tenant's (it
	// names files and functions of the build): it goes to the log only.
	c.logger.Warn("sandbox child crashed", "pid", c.cmd.Process.Pid, "status", how, "answer", readErr, "stderr", out)
	for _, s := range []string{"out of memory", "cannot allocate memory", "failed to reserve", "stack exceeds"} {
		if strings.Contains(out, s) {
			return fmt.Errorf("sandbox: the parser ran out of memory (%s): %w", s, extract.ErrTooLarge)
		}
	}
	return fmt.Errorf("sandbox: the parser crashed (%s): %w", how, extract.ErrMalformed)
}

// resultError turns a child's reported failure back into an error that
// matches the extract sentinel of its reason.
func resultError(r *result) error {
	if sentinel := reasonError[r.Reason]; sentinel != nil {
		return fmt.Errorf("%s: %w", strings.TrimSuffix(r.Err, ": "+sentinel.Error()), sentinel)
	}
	return errors.New(r.Err)
}

var reasonError = map[string]error{
	"unsupported_type": extract.ErrUnsupported,
	"encrypted":        extract.ErrEncrypted,
	"too_large":        extract.ErrTooLarge,
	"too_slow":         extract.ErrTooSlow,
	"timeout":          extract.ErrTimeout,
	"malformed":        extract.ErrMalformed,
}

// stderrLog keeps the first and the last max bytes a child writes to its
// standard error: a Go runtime's fatal error is at the start, before its
// stacks, and a panic's value at the end.
type stderrLog struct {
	mu         sync.Mutex
	max        int
	head, tail []byte
}

func (l *stderrLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	if room := l.max - len(l.head); room > 0 {
		k := min(room, len(p))
		l.head = append(l.head, p[:k]...)
		p = p[k:]
	}
	l.tail = append(l.tail, p...)
	if over := len(l.tail) - l.max; over > 0 {
		l.tail = append(l.tail[:0], l.tail[over:]...)
	}
	return n, nil
}

func (l *stderrLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.tail) == 0 {
		return string(l.head)
	}
	return string(l.head) + "\n…\n" + string(l.tail)
}
