package feed

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/docketq/docket/queue"
)

// Defaults used when a Config field is left zero.
const (
	DefaultPollInterval = 2 * time.Second
	DefaultDebounce     = 25 * time.Millisecond
	DefaultBuffer       = 256
)

// busBuffer is how many bus events may wait for the feed before the bus
// drops them (the feed then re-reads its tenants).
const busBuffer = 4096

// ErrClosed is returned by Subscribe once Run has returned.
var ErrClosed = errors.New("feed: closed")

// Config configures a Feed. Zero fields take the defaults named.
type Config struct {
	// Client reads the store and delivers the events. Required.
	Client *queue.Client
	// Queue is the queue watched, e.g. "documents". Required.
	Queue string
	// PollInterval is how often the subscribed tenants are re-read even
	// without hints. Default 2s.
	PollInterval time.Duration
	// Debounce is how long a cross-process hint waits for more hints before
	// the subscribed tenants are re-read. Default 25ms.
	Debounce time.Duration
	// Buffer is how many changes a subscriber may fall behind before it is
	// dropped. Default 256.
	Buffer int
	// Logger receives the feed's logs. Nil discards them.
	Logger *slog.Logger
}

// Feed streams the changes of one queue's jobs to per-tenant subscribers.
// Build it with New, call Run, then Subscribe. It is safe for concurrent
// use.
type Feed struct {
	cfg    Config
	client *queue.Client
	logger *slog.Logger

	started chan struct{} // closed when Run listens to the bus
	done    chan struct{} // closed when Run has returned
	hint    chan struct{} // buffered 1: re-read every tenant after Debounce
	dirty   chan struct{} // buffered 1: re-read the tenants marked dirty

	mu      sync.Mutex
	running bool
	closed  bool
	tenants map[string]*tenant
	stamp   uint64 // orders store reads and applied events
	lastID  int64  // last event id's microseconds; ids only grow

	wmu            sync.Mutex // guards the two below (activity.go)
	watchers       map[chan struct{}]struct{}
	watchersClosed bool
}

// New returns a feed for cfg. It panics without a Client or Queue (a
// programming error).
func New(cfg Config) *Feed {
	if cfg.Client == nil || cfg.Queue == "" {
		panic("feed: Config.Client and Config.Queue are required")
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.Debounce <= 0 {
		cfg.Debounce = DefaultDebounce
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = DefaultBuffer
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Feed{
		cfg: cfg, client: cfg.Client, logger: logger.With("queue", cfg.Queue),
		started: make(chan struct{}), done: make(chan struct{}),
		hint: make(chan struct{}, 1), dirty: make(chan struct{}, 1),
		tenants: make(map[string]*tenant),
	}
}

// Run delivers changes until ctx ends, then closes every subscription and
// returns nil once its goroutines have stopped. It may be called once.
func (f *Feed) Run(ctx context.Context) error {
	f.mu.Lock()
	if f.running || f.closed {
		f.mu.Unlock()
		return errors.New("feed: Run called twice")
	}
	f.running = true
	f.mu.Unlock()

	bus := f.client.Bus()
	events, unsubscribe := bus.Subscribe(busBuffer, func(e queue.Event) bool {
		return e.Job != nil && e.Job.Queue == f.cfg.Queue
	})
	close(f.started)
	var wg sync.WaitGroup
	wg.Go(func() { f.consume(ctx, events, bus) })
	wg.Go(func() { f.listen(ctx) })
	wg.Go(func() { f.refreshLoop(ctx) })
	<-ctx.Done()
	unsubscribe()
	wg.Wait()
	f.shutdown()
	f.closeWatchers()
	return nil
}

// shutdown closes every subscription and refuses new ones.
func (f *Feed) shutdown() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for _, t := range f.tenants {
		for s := range t.subs {
			s.closeLocked()
		}
	}
	clear(f.tenants)
	close(f.done)
}

// consume applies the in-process events as they come.
func (f *Feed) consume(ctx context.Context, events <-chan queue.Event, bus *queue.Bus) {
	dropped := bus.Dropped()
	for e := range events {
		f.signalWatchers()
		f.handle(ctx, e)
		// The bus counts drops of every subscriber; any drop may have been
		// ours, so re-read rather than risk a missed change.
		if d := bus.Dropped(); d != dropped {
			dropped = d
			poke(f.hint)
		}
	}
}

// listen turns cross-process hints into debounced re-reads: of changes
// and of inserts (a job enqueued or made pending elsewhere is news to a
// tenant's stream too), both of which queue.Client.ListenChanges hears.
func (f *Feed) listen(ctx context.Context) {
	hint := func(q string) {
		if q == f.cfg.Queue {
			poke(f.hint)
			f.signalWatchers()
		}
	}
	if err := f.client.ListenChanges(ctx, hint); err != nil && ctx.Err() == nil {
		f.logger.Error("change notifications stopped; polling only", "error", err)
	}
}

// refreshLoop re-reads the subscribed tenants every PollInterval, and
// Debounce after a hint (all tenants) or a dirty mark (those marked).
func (f *Feed) refreshLoop(ctx context.Context) {
	ticker := time.NewTicker(f.cfg.PollInterval)
	defer ticker.Stop()
	debounce := time.NewTimer(f.cfg.Debounce)
	debounce.Stop()
	defer debounce.Stop()
	const (
		none = iota
		dirtyOnly
		all
	)
	want := none // what the armed debounce timer will re-read
	arm := func(w int) {
		if want == none {
			debounce.Reset(f.cfg.Debounce)
		}
		want = max(want, w)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			f.refreshAll(ctx, false)
		case <-f.hint:
			arm(all)
		case <-f.dirty:
			arm(dirtyOnly)
		case <-debounce.C:
			w := want
			want = none
			f.refreshAll(ctx, w == dirtyOnly)
			if w == all {
				ticker.Reset(f.cfg.PollInterval)
			}
		}
	}
}

// refreshAll re-reads every subscribed tenant (only the dirty ones when
// onlyDirty), logging failures: the next poll retries.
func (f *Feed) refreshAll(ctx context.Context, onlyDirty bool) {
	f.mu.Lock()
	ids := make([]string, 0, len(f.tenants))
	for id, t := range f.tenants {
		if !onlyDirty || t.dirty {
			t.dirty = false
			ids = append(ids, id)
		}
	}
	f.mu.Unlock()
	for _, id := range ids {
		if err := f.refreshTenant(ctx, id); err != nil && ctx.Err() == nil {
			f.logger.Warn("re-read tenant jobs", "tenant_id", id, "error", err)
		}
	}
}

// poke signals ch without blocking; a signal already pending covers this one.
func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
