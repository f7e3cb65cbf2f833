// Package httpapi is Docket's HTTP API: JSON everywhere,
// RFC 9457 problem details for errors, bearer API keys per tenant and an
// admin key for /v1/admin/*, server-sent events for live progress.
//
// Every route is declared once, in the route table (Server.routes): its
// method and pattern, who may call it and its handler. The table drives the
// mux, the OpenAPI coverage test and the cross-tenant (BOLA) sweep, so a new
// route cannot skip any of them. Handlers return errors; one function
// (errorStatus) maps them to status codes, and only 5xx are logged.
package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docketq/docket"
	"github.com/docketq/docket/blob"
	"github.com/docketq/docket/dispatch"
	"github.com/docketq/docket/embedding"
	"github.com/docketq/docket/foreground"
	"github.com/docketq/docket/queue"
)

// Defaults for Config fields left zero.
const (
	DefaultMaxUploadBytes = 100 << 20
	DefaultKeepAlive      = 15 * time.Second
	DefaultAuthCacheTTL   = 5 * time.Second
	DefaultBodyTimeout    = 10 * time.Second

	DefaultMaxStreamsPerKey    = 8
	DefaultMaxStreamsPerTenant = 32
	DefaultStreamWriteTimeout  = 10 * time.Second

	DefaultAuthFailuresPerAddr = 30
	DefaultAuthFailuresPerKey  = 10
	DefaultAuthFailureWindow   = time.Minute

	DefaultSearchesPerTenant = 2
	DefaultSearchTimeout     = 10 * time.Second
)

// Config configures a Server. Store, Queue, Blobs and Embedder are required.
type Config struct {
	Store docket.Store
	Queue *queue.Client
	Blobs blob.Store
	// Embedder embeds search queries; it must be the one the pipeline
	// embeds chunks with.
	Embedder embedding.Embedder
	// Events feeds GET /v1/events (see events.go). Nil disables the route
	// (503).
	Events EventSource
	// AdminKey authorises /v1/admin/*. Empty disables the admin API.
	AdminKey string
	// MaxUploadBytes caps an uploaded file. Default DefaultMaxUploadBytes.
	MaxUploadBytes int64
	// KeepAlive is the interval of SSE keep-alive comments. Default 15s.
	KeepAlive time.Duration
	// AuthCacheTTL is how long a verified key is trusted without a store
	// lookup, so a revoked key stops working within it. Default 5s.
	AuthCacheTTL time.Duration
	// BodyTimeout is how long a request body other than an upload may
	// take to arrive; an upload is held to its minimum transfer rate
	// instead. Default DefaultBodyTimeout.
	BodyTimeout time.Duration
	// MaxStreamsPerKey and MaxStreamsPerTenant cap the open
	// GET /v1/events streams of one API key and of one tenant; more are
	// refused with 429. Defaults DefaultMaxStreamsPerKey and
	// DefaultMaxStreamsPerTenant.
	MaxStreamsPerKey, MaxStreamsPerTenant int
	// StreamAuthInterval is how often an open event stream checks that
	// its key is still usable and its tenant still there; it ends when not
	// (a key revoked through this server ends its streams at once).
	// Default DefaultAuthCacheTTL.
	StreamAuthInterval time.Duration
	// StreamWriteTimeout is how long a write to an event stream may take:
	// a client that does not read is disconnected after it. Default
	// DefaultStreamWriteTimeout.
	StreamWriteTimeout time.Duration
	// AuthFailuresPerAddr and AuthFailuresPerKey are how many failed
	// authentications a client address, and a key id from one client
	// address, may make in AuthFailureWindow; past them every request of
	// that address, or with that key id from that address, is refused with
	// 429 and Retry-After until the window ends. Defaults
	// DefaultAuthFailuresPerAddr and DefaultAuthFailuresPerKey.
	AuthFailuresPerAddr, AuthFailuresPerKey int
	// AuthFailureWindow is the window of the failed-authentication
	// counts. Default DefaultAuthFailureWindow.
	AuthFailureWindow time.Duration
	// SearchesPerTenant caps the searches of one tenant running at once;
	// more are refused with 429 and Retry-After. Default
	// DefaultSearchesPerTenant.
	SearchesPerTenant int
	// SearchTimeout bounds one search; one that takes longer is answered
	// 503 with Retry-After. Default DefaultSearchTimeout.
	SearchTimeout time.Duration
	// Dispatch sends job kinds to HTTP endpoints (package dispatch):
	// tenants enqueue them with POST /v1/dispatch/jobs and their endpoints
	// report through /v1/dispatch/jobs/{id}/* with the tokens it issues.
	// Nil: no kind is dispatched.
	Dispatch *dispatch.Dispatcher
	// Metrics is where the API registers its metrics (requests, 429s,
	// SSE clients); the ops listener serves them. Nil: a registry of its
	// own, which nobody scrapes.
	Metrics prometheus.Registerer
	// Logger receives 5xx errors and lifecycle logs. Nil discards them.
	Logger *slog.Logger
	// Foreground, when set, counts the requests being answered (but not
	// the event streams, which last), for background work that steps
	// aside for them (pipeline.Config.Foreground).
	Foreground *foreground.Gate
}

// Server serves the API. Build it with New; it is safe for concurrent use.
type Server struct {
	cfg      Config
	logger   *slog.Logger
	keys     *keyCache
	streams  *streams
	fails    *failures
	searches *inflight
	metrics  *metrics
	table    []route
	mux      *http.ServeMux
	patterns map[string]bool // the mux's patterns, "METHOD /path"
}

// New validates cfg and returns a server.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Queue == nil || cfg.Blobs == nil || cfg.Embedder == nil {
		return nil, fmt.Errorf("%w: httpapi: Store, Queue, Blobs and Embedder are required", docket.ErrInvalid)
	}
	if cfg.MaxUploadBytes <= 0 {
		cfg.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = DefaultKeepAlive
	}
	if cfg.AuthCacheTTL <= 0 {
		cfg.AuthCacheTTL = DefaultAuthCacheTTL
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = DefaultBodyTimeout
	}
	if cfg.AuthFailuresPerAddr <= 0 {
		cfg.AuthFailuresPerAddr = DefaultAuthFailuresPerAddr
	}
	if cfg.AuthFailuresPerKey <= 0 {
		cfg.AuthFailuresPerKey = DefaultAuthFailuresPerKey
	}
	if cfg.AuthFailureWindow <= 0 {
		cfg.AuthFailureWindow = DefaultAuthFailureWindow
	}
	if cfg.SearchesPerTenant <= 0 {
		cfg.SearchesPerTenant = DefaultSearchesPerTenant
	}
	if cfg.SearchTimeout <= 0 {
		cfg.SearchTimeout = DefaultSearchTimeout
	}
	if cfg.MaxStreamsPerKey <= 0 {
		cfg.MaxStreamsPerKey = DefaultMaxStreamsPerKey
	}
	if cfg.MaxStreamsPerTenant <= 0 {
		cfg.MaxStreamsPerTenant = DefaultMaxStreamsPerTenant
	}
	if cfg.StreamAuthInterval <= 0 {
		cfg.StreamAuthInterval = DefaultAuthCacheTTL
	}
	if cfg.StreamWriteTimeout <= 0 {
		cfg.StreamWriteTimeout = DefaultStreamWriteTimeout
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, logger: logger, keys: newKeyCache(cfg.AuthCacheTTL), streams: newStreams(), fails: newFailures(cfg.AuthFailureWindow), searches: newInflight()}
	var err error
	if s.metrics, err = newMetrics(cfg.Metrics, s.streams); err != nil {
		return nil, fmt.Errorf("httpapi: metrics: %w", err)
	}
	s.table = s.routes()
	s.mux = http.NewServeMux()
	s.patterns = make(map[string]bool, len(s.table))
	for _, rt := range s.table {
		s.mux.Handle(rt.method+" "+rt.pattern, s.wrap(rt))
		s.patterns[rt.method+" "+rt.pattern] = true
	}
	return s, nil
}

// Handler returns the API's HTTP handler.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// serveHTTP routes r. A request that matches no route (404, 405 or a
// redirect) gets its 404 or 405 as a problem document, like every other
// error; if it announces a body, it is answered at once and its connection
// closed, since nothing will read that body. A route sets its own body
// deadline (bodyDeadline).
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if _, pattern := s.mux.Handler(r); !s.patterns[pattern] {
		if r.ContentLength != 0 {
			closeUnread(w)
		}
		w = &unroutedWriter{ResponseWriter: w, s: s, r: r}
	}
	s.mux.ServeHTTP(w, r)
}

// unroutedWriter turns the mux's own 404 and 405 answers (plain text) into
// problem documents; the mux's headers (Allow on a 405) stay, its text
// goes. Any other answer, a redirect, passes through.
type unroutedWriter struct {
	http.ResponseWriter
	s        *Server
	r        *http.Request
	replaced bool
}

func (w *unroutedWriter) WriteHeader(code int) {
	if w.replaced || (code != http.StatusNotFound && code != http.StatusMethodNotAllowed) {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.replaced = true
	detail := "no such route"
	if code == http.StatusMethodNotAllowed {
		detail = "the route does not take this method (see Allow)"
	}
	w.s.writeError(w.ResponseWriter, w.r, errorf(code, "%s", detail))
}

func (w *unroutedWriter) Write(b []byte) (int, error) {
	if w.replaced {
		return len(b), nil // the mux's text, replaced by the problem
	}
	return w.ResponseWriter.Write(b)
}

func (w *unroutedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// access says who may call a route.
type access int

const (
	public access = iota // no key
	tenant               // a tenant's API key
	admin                // the admin key
)

// route is one entry of the route table.
type route struct {
	method  string // GET, POST, DELETE
	pattern string // a net/http pattern without the method: "/v1/jobs/{id}"
	access  access
	handle  func(w http.ResponseWriter, r *http.Request) error
}

// routes is the route table: every route of the API, grouped by the file
// that serves it.
func (s *Server) routes() []route {
	var rs []route
	rs = append(rs, s.systemRoutes()...)   // system.go: health, readiness, OpenAPI
	rs = append(rs, s.tenantRoutes()...)   // documents, jobs, search, rate limit
	rs = append(rs, s.eventRoutes()...)    // events.go: server-sent events
	rs = append(rs, s.adminRoutes()...)    // admin.go: /v1/admin/*
	rs = append(rs, s.dispatchRoutes()...) // dispatch_routes.go: /v1/dispatch/*
	return rs
}

// RouteInfo describes a route, for documentation and tests.
type RouteInfo struct {
	Method, Pattern string
	Public, Admin   bool
}

// Routes lists every route the server serves.
func (s *Server) Routes() []RouteInfo {
	out := make([]RouteInfo, len(s.table))
	for i, rt := range s.table {
		out[i] = RouteInfo{Method: rt.method, Pattern: rt.pattern, Public: rt.access == public, Admin: rt.access == admin}
	}
	return out
}

// wrap adds authentication, error mapping and metrics to a route.
func (s *Server) wrap(rt route) http.Handler {
	name := rt.method + " " + rt.pattern
	stream := strings.HasSuffix(rt.pattern, "/events")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if !stream {
			defer s.cfg.Foreground.Enter()()
		}
		sw := &statusWriter{ResponseWriter: w}
		s.bodyDeadline(sw, r, name)
		if rt.access != public {
			// Tenant data and the admin API's answers are for no cache.
			sw.Header().Set("Cache-Control", "no-store")
		}
		r, err := s.authorize(rt.access, r)
		if err == nil {
			err = checkText(r)
		}
		if err == nil {
			err = rt.handle(sw, r)
		} else {
			err = refuseUnread(sw, r, err) // refused before its body was read
		}
		if err != nil {
			s.writeError(sw, r, err)
		}
		s.metrics.observe(name, sw.status(), time.Since(start))
	})
}

// bodyDeadline keeps a request body that does not come from holding the
// connection: Go's server reads up to 256 KiB of an unread body before it
// answers, and would wait for it forever. A method that takes no body
// answers at once and closes the connection; other routes get BodyTimeout
// to send theirs (decodeJSON clears the deadline once the body is read);
// uploads set their own deadlines, from the minimum transfer rate.
func (s *Server) bodyDeadline(w http.ResponseWriter, r *http.Request, route string) {
	if r.ContentLength == 0 {
		return
	}
	rc := http.NewResponseController(w)
	switch {
	case !takesBody(r.Method):
		closeUnread(w)
	case route == uploadRoute:
		_ = rc.SetReadDeadline(time.Now().Add(uploadGrace))
	default:
		_ = rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout))
	}
}

// statusWriter remembers the status code written. It unwraps for
// http.ResponseController (flushes, deadlines).
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

// errResponseStarted marks an error after the response began: it is logged
// (when 5xx) but nothing more is written.
var errResponseStarted = errors.New("response already started")
