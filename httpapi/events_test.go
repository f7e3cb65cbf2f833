package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/docketq/docket"
	"github.com/docketq/docket/apikey"
	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/feed"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/internal/storepair"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/sqlite"
)

// The queue and kind of document jobs (pipeline.Queue, pipeline.Kind).
const (
	sseQueue = "documents"
	sseKind  = "process_document"
	sseWait  = 10 * time.Second
)

// sseEnv is a real server with a feed on a real SQLite store and queue.
type sseEnv struct {
	t      testing.TB
	driver *storepair.SQLite
	queue  *queue.Client
	url    string
	stop   context.CancelFunc // stops the feed
}

// sseTenant is a tenant and its API key.
type sseTenant struct {
	id, key string
}

func newSSEEnv(t testing.TB, keepAlive time.Duration) *sseEnv {
	t.Helper()
	return newSSEEnvConfig(t, func(c *httpapi.Config) { c.KeepAlive = keepAlive })
}

// newSSEEnvConfig is newSSEEnv with the server's configuration changed by
// edit.
func newSSEEnvConfig(t testing.TB, edit func(*httpapi.Config)) *sseEnv {
	t.Helper()
	opts := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opts) })
	dRaw, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	d := storepair.NewSQLite(dRaw)
	t.Cleanup(func() { d.Close() })
	if err := d.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	q := queue.NewClient(d, queue.ClientConfig{})
	f := feed.New(feed.Config{Client: q, Queue: sseQueue})
	e := &sseEnv{t: t, driver: d, queue: q}
	e.stop = sseGo(t, f.Run)
	cfg := httpapi.Config{Store: d, Queue: q, Blobs: blobs, Embedder: embedding.NewHashing(0), Events: f}
	edit(&cfg)
	srv, err := httpapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(httpapi.ValidateResponses(t, srv.Handler()))
	t.Cleanup(hs.Close)
	e.url = hs.URL
	return e
}

// sseGo runs fn until the test ends (or the returned function is called),
// then waits for it.
func sseGo(t testing.TB, fn func(context.Context) error) context.CancelFunc {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	return cancel
}

func (e *sseEnv) tenant(name string) sseTenant {
	e.t.Helper()
	ctx := e.t.Context()
	tn, err := e.driver.TenantCreate(ctx, &docket.TenantCreateParams{ID: "t-" + name, Name: name, Plan: docket.PlanFree})
	if err != nil {
		e.t.Fatal(err)
	}
	k, err := apikey.Generate()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.driver.APIKeyInsert(ctx, &docket.APIKey{ID: k.ID, TenantID: tn.ID, Hash: k.Hash, Name: "test"}); err != nil {
		e.t.Fatal(err)
	}
	return sseTenant{id: tn.ID, key: k.Plain}
}

func (e *sseEnv) enqueue(tenantID, name string) *queue.Job {
	e.t.Helper()
	res, err := e.queue.Enqueue(e.t.Context(), &queue.EnqueueParams{
		Queue: sseQueue, Kind: sseKind, TenantID: tenantID, Args: map[string]string{"document_id": name},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return res.Job
}

// work starts a worker whose handler reports "parsing" 40% and then waits
// for release before completing.
func (e *sseEnv) work(release <-chan struct{}) {
	e.t.Helper()
	h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
		if err := task.Progress(ctx, "parsing", 40, "page 2 of 5"); err != nil {
			return err
		}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	w, err := queue.NewWorker(e.queue, queue.WorkerConfig{
		Queues:        map[string]queue.QueueConfig{sseQueue: {MaxWorkers: 2}},
		Handlers:      map[string]queue.HandlerConfig{sseKind: {Handler: h}},
		PollInterval:  50 * time.Millisecond,
		ShutdownGrace: 10 * time.Millisecond,
		Maintenance:   queue.MaintenanceConfig{Disabled: true},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	sseGo(e.t, w.Run)
}

// sseEvent is one server-sent event, or a comment.
type sseEvent struct {
	id, event, comment string
	job                httpapi.JobView
}

// sseStream is an open GET /v1/events.
type sseStream struct {
	t      testing.TB
	header http.Header
	events chan sseEvent // closed when the stream ends
	cancel context.CancelFunc
	wait   time.Duration // how long next waits for an event
}

// connect opens the event stream as tenant, resuming after lastID when set.
func (e *sseEnv) connect(tn sseTenant, lastID string) *sseStream {
	e.t.Helper()
	return connectSSE(e.t, e.url, tn.key, lastID)
}

// connectSSE opens GET /v1/events of the server at base with key,
// resuming after lastID when set.
func connectSSE(t testing.TB, base, key, lastID string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/events: %s", res.Status)
	}
	s := &sseStream{t: t, header: res.Header, events: make(chan sseEvent, 100), cancel: cancel, wait: sseWait}
	var wg sync.WaitGroup
	wg.Go(func() { s.read(res) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return s
}

// read parses the stream into events until it ends.
func (s *sseStream) read(res *http.Response) {
	defer res.Body.Close()
	defer close(s.events)
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.event != "" || ev.comment != "" {
				s.events <- ev
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, ":"):
			ev.comment = strings.TrimSpace(line[1:])
		case strings.HasPrefix(line, "id: "):
			ev.id = line[len("id: "):]
		case strings.HasPrefix(line, "event: "):
			ev.event = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(line[len("data: "):]), &ev.job); err != nil {
				s.t.Errorf("data %q: %v", line, err)
			}
		}
	}
}

// next returns the next event (comments too), failing after s.wait.
func (s *sseStream) next() (sseEvent, bool) {
	s.t.Helper()
	select {
	case ev, ok := <-s.events:
		return ev, ok
	case <-time.After(s.wait):
		s.t.Fatal("no event")
		return sseEvent{}, false
	}
}

// until returns the first job event that matches, checking every job event
// read belongs to tenantID.
func (s *sseStream) until(tenantID string, match func(httpapi.JobView) bool) sseEvent {
	s.t.Helper()
	for {
		ev, ok := s.next()
		if !ok {
			s.t.Fatal("stream ended")
		}
		if ev.event != "job" {
			continue
		}
		if ev.job.TenantID != tenantID || ev.id == "" {
			s.t.Fatalf("event %+v in tenant %s's stream", ev, tenantID)
		}
		if match(ev.job) {
			return ev
		}
	}
}

func jobIs(id int64, status, stage string, percent int) func(httpapi.JobView) bool {
	want := strconv.FormatInt(id, 10)
	return func(v httpapi.JobView) bool {
		return v.ID == want && v.Status == status && v.Stage == stage && v.ProgressPercent == percent
	}
}

func TestEvents_SnapshotThenProgress(t *testing.T) {
	e := newSSEEnv(t, time.Hour)
	a, b := e.tenant("A"), e.tenant("B")
	a1, a2 := e.enqueue(a.id, "a1"), e.enqueue(a.id, "a2")
	b1 := e.enqueue(b.id, "b1")

	sa, sb := e.connect(a, ""), e.connect(b, "")
	if ct := sa.header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	// The snapshot comes first, in queue order, as the API shows jobs.
	for i, want := range []*queue.Job{a1, a2} {
		ev, _ := sa.next()
		v := ev.job
		if ev.event != "job" || ev.id == "" || v.ID != strconv.FormatInt(want.ID, 10) || v.Status != "pending" ||
			v.Stage != "queued" || v.QueuePosition == nil || *v.QueuePosition != i || v.TenantID != a.id {
			t.Fatalf("snapshot event %d: %+v, want job %d at position %d", i, ev, want.ID, i)
		}
	}
	sb.until(b.id, jobIs(b1.ID, "pending", "queued", 0))

	release := make(chan struct{})
	e.work(release)
	sa.until(a.id, jobIs(a1.ID, "processing", "parsing", 40))
	sb.until(b.id, jobIs(b1.ID, "processing", "parsing", 40))
	close(release)
	sa.until(a.id, jobIs(a1.ID, "completed", "completed", 100))
	ev := sa.until(a.id, jobIs(a2.ID, "processing", "parsing", 40))
	if ev.job.QueuePosition != nil || ev.job.StartedAt == nil {
		t.Errorf("running job: position %v, started at %v", ev.job.QueuePosition, ev.job.StartedAt)
	}
	// B saw none of A's jobs (until checks every event), and its own end.
	sb.until(b.id, jobIs(b1.ID, "completed", "completed", 100))
}

func TestEvents_ResumeWithLastEventID(t *testing.T) {
	e := newSSEEnv(t, time.Hour)
	a := e.tenant("A")
	a1, a2 := e.enqueue(a.id, "a1"), e.enqueue(a.id, "a2")
	first := e.connect(a, "")
	ev := first.until(a.id, jobIs(a2.ID, "pending", "queued", 0))
	first.cancel()

	// While disconnected, a1 is cancelled: it leaves the snapshot, so only
	// the replay can tell.
	if _, err := e.queue.Cancel(t.Context(), a1.ID, a.id); err != nil {
		t.Fatal(err)
	}
	again := e.connect(a, ev.id)
	replayed := again.until(a.id, jobIs(a1.ID, "cancelled", "queued", 0))
	if replayed.job.QueuePosition != nil {
		t.Errorf("cancelled job has a position: %d", *replayed.job.QueuePosition)
	}
	snap := again.until(a.id, jobIs(a2.ID, "pending", "queued", 0))
	if snap.job.QueuePosition == nil || *snap.job.QueuePosition != 0 {
		t.Errorf("a2 after a1's cancel: position %v, want 0", snap.job.QueuePosition)
	}

	// An id the server cannot read starts afresh with the snapshot.
	fresh := e.connect(a, "not-an-id")
	fresh.until(a.id, jobIs(a2.ID, "pending", "queued", 0))
}

func TestEvents_KeepAliveAndShutdown(t *testing.T) {
	e := newSSEEnv(t, 20*time.Millisecond)
	a := e.tenant("A")
	s := e.connect(a, "")
	for {
		ev, ok := s.next()
		if !ok {
			t.Fatal("stream ended")
		}
		if ev.comment == "keep-alive" {
			break
		}
	}
	// Stopping the feed (the server shutting down) ends the stream.
	e.stop()
	for {
		if _, ok := s.next(); !ok {
			return
		}
	}
}

func TestEvents_NeedsKey(t *testing.T) {
	e := newSSEEnv(t, time.Hour)
	res, err := http.Get(e.url + "/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("status %d, want 401", res.StatusCode)
	}
}

// BenchmarkEvents_Latency times a handler's progress report (its store
// write included) to its arrival at an SSE client over HTTP, on SQLite in
// one process; it reports p50 and p99.
func BenchmarkEvents_Latency(b *testing.B) {
	e := newSSEEnv(b, time.Hour)
	a := e.tenant("A")
	report := make(chan int)
	h := queue.HandlerFunc(func(ctx context.Context, task *queue.Task) error {
		for {
			select {
			case i := <-report:
				if err := task.Progress(ctx, "s"+strconv.Itoa(i), i%100, ""); err != nil {
					return err
				}
			case <-ctx.Done():
				return nil
			}
		}
	})
	w, err := queue.NewWorker(e.queue, queue.WorkerConfig{
		Queues:        map[string]queue.QueueConfig{sseQueue: {MaxWorkers: 1}},
		Handlers:      map[string]queue.HandlerConfig{sseKind: {Handler: h}},
		ShutdownGrace: 10 * time.Millisecond,
		Maintenance:   queue.MaintenanceConfig{Disabled: true},
	})
	if err != nil {
		b.Fatal(err)
	}
	sseGo(b, w.Run)
	s := e.connect(a, "")
	j := e.enqueue(a.id, "bench")
	s.until(a.id, func(v httpapi.JobView) bool { return v.ID == strconv.FormatInt(j.ID, 10) && v.Status == "processing" })
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		report <- i
		stage := "s" + strconv.Itoa(i)
		s.until(a.id, func(v httpapi.JobView) bool { return v.Stage == stage })
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
