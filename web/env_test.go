package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/feed"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/internal/storepair"
	"github.com/docketq/docket/pipeline"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/sqlite"
	"github.com/docketq/docket/web"
	"github.com/docketq/docket/web/webtest"
)

// screenshots makes the browser tests save the dashboard's main views under
// docs/screenshots (shown in the README): go test ./web -run TestDashboard -screenshots
var screenshots = flag.Bool("screenshots", false, "save screenshots of the dashboard under docs/screenshots")

// adminKey is the env's admin key.
const adminKey = "console-test-admin-key"

// wait bounds every wait of the browser tests: the first PDF of a machine
// may compile the PDF engine (seconds, more under -race).
const wait = time.Minute

// env is the document service as `docket serve` runs it (SQLite store,
// local blobs, the real pipeline and event feed, the API and the
// dashboard) on loopback, with one tenant, and a browser tab.
type env struct {
	t     *testing.T
	url   string
	key   string // the tenant's API key
	store *storepair.SQLite
	queue *queue.Client
	embed *gatedEmbedder
	saves *gatedSaves   // the pipeline's store: holds a job's last step
	page  *webtest.Page // the tenant's dashboard
	b     *webtest.Browser

	mu      sync.Mutex
	streams map[*http.Request]context.CancelFunc // open GET /v1/events
	resumes []string                             // Last-Event-ID of every GET /v1/events
	listing chan struct{}                        // while not nil, GET /v1/documents waits for it to close

	console *consoleTraffic     // the operator console's requests (console_live_test.go)
	routes  []httpapi.RouteInfo // what the API serves
}

// setup starts an env whose tenant has the plan's upload limit (or
// rateLimit when positive) and runs concurrency documents at once, and
// opens the dashboard, connected with the tenant's key.
func setup(t *testing.T, concurrency, rateLimit int) *env {
	t.Helper()
	return setupWith(t, concurrency, rateLimit, 0)
}

// setupWith is setup with the processor's Config.RangePages.
func setupWith(t *testing.T, concurrency, rateLimit, rangePages int) *env {
	t.Helper()
	b := webtest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	e := &env{t: t, b: b, streams: map[*http.Request]context.CancelFunc{}, console: newConsoleTraffic()}
	dRaw, err := sqlite.Open(ctx, storepair.SQLitePath(t))
	if err != nil {
		t.Fatal(err)
	}
	d := storepair.NewSQLite(dRaw)
	if err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e.store, e.queue = d, queue.NewClient(d, queue.ClientConfig{})
	e.embed = &gatedEmbedder{Embedder: embedding.NewHashing(0)}
	events := feed.New(feed.Config{Client: e.queue, Queue: docket.DocumentQueue})
	api, err := httpapi.New(httpapi.Config{Store: d, Queue: e.queue, Blobs: blobs, Embedder: embedding.NewHashing(0), Events: events,
		AdminKey: adminKey})
	if err != nil {
		t.Fatal(err)
	}
	e.routes = api.Routes()
	e.saves = &gatedSaves{Store: d}
	proc, err := pipeline.NewProcessor(pipeline.Config{Store: e.saves, Blobs: blobs, Embedder: e.embed, RangePages: rangePages})
	if err != nil {
		t.Fatal(err)
	}
	w, err := queue.NewWorker(e.queue, queue.WorkerConfig{
		Queues:        map[string]queue.QueueConfig{docket.DocumentQueue: {MaxWorkers: 4}},
		Handlers:      proc.Handlers(),
		PollInterval:  50 * time.Millisecond,
		ShutdownGrace: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", api.Handler())
	mux.Handle("GET /{$}", web.Handler())
	mux.Handle("GET /ui/", web.Handler())
	mux.Handle("GET /v1/events", e.droppable(api.Handler()))
	mux.Handle("GET /v1/documents", e.heldListing(api.Handler()))
	mux.Handle("/v1/admin/", e.console.watch(api.Handler()))
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.BaseContext = func(_ net.Listener) context.Context { return ctx }
	srv.Start()
	var wg sync.WaitGroup
	wg.Go(func() { _ = w.Run(ctx) })
	wg.Go(func() { _ = events.Run(ctx) })
	// A cleanup, not a defer: it runs after the page's failure screenshot.
	t.Cleanup(func() {
		e.embed.open()
		e.saves.open()
		cancel()
		srv.Close()
		wg.Wait()
		_ = d.Close()
	})
	_, key, err := docket.Provision(ctx, d, e.queue, docket.TenantCreateParams{
		Name: "acme", Plan: docket.PlanStarter, Concurrency: concurrency, RateLimit: rateLimit,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.url, e.key = srv.URL, key.Plain
	e.page = b.NewPage(t)
	e.page.ReduceMotion() // screenshots and checks see bars where they are, not halfway there
	e.page.Navigate(e.url + "/")
	e.page.Type("#key", e.key)
	e.page.Click("#keyform button[type=submit]")
	e.page.WaitFor(`the status "live"`, `document.querySelector("#conn").textContent === "live"`, 10*time.Second)
	return e
}

// droppable serves GET /v1/events through next, noting each request's
// Last-Event-ID, and lets dropStreams end the open ones from the server's
// side.
func (e *env) droppable(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		r = r.WithContext(ctx)
		e.mu.Lock()
		e.streams[r] = cancel
		e.resumes = append(e.resumes, r.Header.Get("Last-Event-ID"))
		e.mu.Unlock()
		defer func() {
			e.mu.Lock()
			delete(e.streams, r)
			e.mu.Unlock()
			cancel()
		}()
		next.ServeHTTP(w, r)
	})
}

// heldListing serves GET /v1/documents through next once holdListing's
// hold, if any, is released.
func (e *env) heldListing(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		hold := e.listing
		e.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// holdListing makes GET /v1/documents wait until the function it returns
// is called (as a large listing answers after the event stream has told
// of the active jobs).
func (e *env) holdListing() (release func()) {
	hold := make(chan struct{})
	e.mu.Lock()
	e.listing = hold
	e.mu.Unlock()
	var once sync.Once
	release = func() {
		once.Do(func() {
			e.mu.Lock()
			e.listing = nil
			e.mu.Unlock()
			close(hold)
		})
	}
	e.t.Cleanup(release)
	return release
}

// dropStreams ends every open event stream from the server's side and
// returns how many it ended.
func (e *env) dropStreams() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, cancel := range e.streams {
		cancel()
	}
	return len(e.streams)
}

// streamRequests returns the Last-Event-ID of every GET /v1/events so far
// and how many are open now.
func (e *env) streamRequests() (resumes []string, open int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.resumes...), len(e.streams)
}

// upload posts a file through the API (not the page), as another client of
// the tenant would.
func (e *env) upload(name string, data []byte) (doc httpapi.DocumentView, job httpapi.JobView) {
	e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = fw.Write(data)
	_ = mw.Close()
	req, _ := http.NewRequestWithContext(e.t.Context(), http.MethodPost, e.url+"/v1/documents", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	var out struct {
		Document httpapi.DocumentView `json:"document"`
		Job      httpapi.JobView      `json:"job"`
	}
	e.do(req, http.StatusAccepted, &out)
	return out.Document, out.Job
}

// status returns the status of GET path with key.
func (e *env) status(path, key string) int {
	e.t.Helper()
	req, _ := http.NewRequestWithContext(e.t.Context(), http.MethodGet, e.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// get decodes the 200 answer to GET path into v.
func (e *env) get(path string, v any) {
	e.t.Helper()
	req, _ := http.NewRequestWithContext(e.t.Context(), http.MethodGet, e.url+path, nil)
	e.do(req, http.StatusOK, v)
}

// adminGet decodes the 200 answer to GET path, asked with the admin key,
// into v.
func (e *env) adminGet(path string, v any) {
	e.t.Helper()
	req, _ := http.NewRequestWithContext(e.t.Context(), http.MethodGet, e.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+adminKey)
	e.do(req, http.StatusOK, v)
}

// do sends req, with the tenant's key unless it has one, and decodes the
// answer, which must have status want, into v.
func (e *env) do(req *http.Request, want int, v any) {
	e.t.Helper()
	if req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", "Bearer "+e.key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		e.t.Fatalf("%s %s: %d, want %d: %s", req.Method, req.URL.Path, res.StatusCode, want, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		e.t.Fatalf("%s %s: %v in %s", req.Method, req.URL.Path, err, body)
	}
}

// card is a JavaScript expression for the card of the document named name.
func card(name string) string {
	return fmt.Sprintf(`[...document.querySelectorAll("#doclist li.doc")].find((li) => li.querySelector(".doc-name").textContent === %s)`, jsQuote(name))
}

// cardText is the text of a part of that card ("" while there is none).
func (e *env) cardText(name, part string) string {
	e.t.Helper()
	var s string
	e.page.Eval(fmt.Sprintf(`(() => { const c = %s; const p = c && c.querySelector(%s); return p ? p.textContent : ""; })()`, card(name), jsQuote(part)), &s)
	return s
}

// noPageErrors fails the test if the page threw or broke its
// Content-Security-Policy.
func (e *env) noPageErrors() {
	e.t.Helper()
	if ex := e.page.Exceptions(); len(ex) > 0 {
		e.t.Errorf("the page threw:\n%s", strings.Join(ex, "\n"))
	}
	for _, line := range e.page.Console() {
		if strings.Contains(line, "Content Security Policy") || strings.Contains(line, "Content-Security-Policy") {
			e.t.Errorf("CSP violation: %s", line)
		}
	}
}

// screenshot saves the page as docs/screenshots/name.png when the tests
// run with -screenshots.
func (e *env) screenshot(name string) {
	e.t.Helper()
	screenshot(e.t, e.page, name)
}

func screenshot(t *testing.T, p *webtest.Page, name string) {
	t.Helper()
	if !*screenshots {
		return
	}
	dir := filepath.Join("..", "docs", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := p.Screenshot(filepath.Join(dir, name+".png")); err != nil {
		t.Fatal(err)
	}
}

// writeFile writes data to a file named name in a new directory.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func jsQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// gatedEmbedder is the pipeline's embedder (the real hashing one) with the
// two things an embedding service does that a test needs on cue: it can be
// slow (hold, then let one call through at a time) and it can refuse
// (fail). It changes when work happens, never what the work gives.
type gatedEmbedder struct {
	embedding.Embedder
	mu   sync.Mutex
	gate chan struct{} // nil: calls go through; else each call takes a token
	fail error
}

// hold makes every call wait for a token from release.
func (g *gatedEmbedder) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gate == nil {
		g.gate = make(chan struct{})
	}
}

// release lets one held call through (blocking until one waits).
func (g *gatedEmbedder) release(ctx context.Context) {
	g.mu.Lock()
	gate := g.gate
	g.mu.Unlock()
	select {
	case gate <- struct{}{}:
	case <-ctx.Done():
	}
}

// open lets every call through from now on.
func (g *gatedEmbedder) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gate != nil {
		close(g.gate)
		g.gate = nil
	}
}

// refuse makes calls fail with err (nil: succeed again).
func (g *gatedEmbedder) refuse(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.fail = err
}

func (g *gatedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	g.mu.Lock()
	gate, fail := g.gate, g.fail
	g.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.Embedder.Embed(ctx, texts)
}

// gatedSaves is the pipeline's store (the real one) with a gate before
// write transactions. A job writes its chunks in batches as it embeds them,
// then saves its results and completes after the analysis: held after its
// chunk batches, a job waits there with all its early results reported.
// Like gatedEmbedder, it changes when work happens, never what the work
// gives.
type gatedSaves struct {
	docket.Store
	mu      sync.Mutex
	pass    int           // saves let through before the gate holds
	gate    chan struct{} // nil: saves go through
	waiting chan struct{} // receives when a save waits at the gate
}

// holdAfter lets the next n saves through (a job's chunk batches) and makes
// every later one wait until open.
func (g *gatedSaves) holdAfter(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pass = n
	if g.gate == nil {
		g.gate, g.waiting = make(chan struct{}), make(chan struct{}, 16)
	}
}

// open lets every save through from now on.
func (g *gatedSaves) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gate != nil {
		close(g.gate)
		g.gate = nil
	}
}

// InTenant waits at the gate, if held, then runs fn in the real store.
func (g *gatedSaves) InTenant(ctx context.Context, tenantID string, fn func(docket.Tx) error) error {
	g.mu.Lock()
	gate, waiting := g.gate, g.waiting
	if gate != nil && g.pass > 0 {
		g.pass--
		gate = nil
	}
	g.mu.Unlock()
	if gate != nil {
		select {
		case waiting <- struct{}{}:
		default:
		}
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return g.Store.InTenant(ctx, tenantID, fn)
}
