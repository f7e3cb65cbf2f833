package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/docketq/docket"
	"github.com/docketq/docket/feed"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/ops"
	"github.com/docketq/docket/pipeline"
	"github.com/docketq/docket/web"
)

// httpFlags configure the API server.
type httpFlags struct {
	listen              string
	adminKey            string
	adminKeyFile        string
	maxConns            int
	maxConnsPerAddr     int
	bodyTimeout         time.Duration
	maxStreamsPerKey    int
	maxStreamsPerTenant int
	streamWriteTimeout  time.Duration
	authFailuresPerAddr int
	authFailuresPerKey  int
	searchesPerTenant   int
	searchTimeout       time.Duration
	reserved            int // open files other listeners may hold: the ops listener's cap
	env                 envFlags
}

func (f *httpFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&f.listen, "listen", envOr(getenv, "DOCKET_LISTEN", "127.0.0.1:8080"),
		"address the API and dashboard listen on (port 0 picks a free one) [DOCKET_LISTEN]")
	fs.StringVar(&f.adminKey, "admin-key", getenv("DOCKET_ADMIN_KEY"),
		"key for /v1/admin/* (32 random bytes' worth; shows in ps: prefer --admin-key-file); none: a key generated into <data-dir>/admin.key [DOCKET_ADMIN_KEY]")
	fs.StringVar(&f.adminKeyFile, "admin-key-file", getenv("DOCKET_ADMIN_KEY_FILE"),
		"file holding the key for /v1/admin/* [DOCKET_ADMIN_KEY_FILE]")
	f.env = envFlags{fs: fs, getenv: getenv}
	e := &f.env
	e.intVar(&f.maxConns, "max-conns", "DOCKET_MAX_CONNS", httpapi.DefaultMaxConns,
		"open connections in all; more are refused with 503 (-1: no cap; lowered to fit the open-file limit)")
	e.intVar(&f.maxConnsPerAddr, "max-conns-per-addr", "DOCKET_MAX_CONNS_PER_ADDR", httpapi.DefaultMaxConnsPerAddr,
		"open connections from one client IP address; more are refused with 503 (-1: no cap; behind a proxy, cap at the proxy)")
	e.durationVar(&f.bodyTimeout, "body-timeout", "DOCKET_BODY_TIMEOUT", httpapi.DefaultBodyTimeout,
		"time a request body other than an upload may take to arrive (uploads have a minimum transfer rate)")
	e.intVar(&f.maxStreamsPerKey, "max-streams-per-key", "DOCKET_MAX_STREAMS_PER_KEY", httpapi.DefaultMaxStreamsPerKey,
		"open GET /v1/events streams of one API key; more are refused with 429")
	e.intVar(&f.maxStreamsPerTenant, "max-streams-per-tenant", "DOCKET_MAX_STREAMS_PER_TENANT", httpapi.DefaultMaxStreamsPerTenant,
		"open GET /v1/events streams of one tenant; more are refused with 429")
	e.durationVar(&f.streamWriteTimeout, "stream-write-timeout", "DOCKET_STREAM_WRITE_TIMEOUT", httpapi.DefaultStreamWriteTimeout,
		"time a write to an event stream may take; a client that does not read is disconnected")
	e.intVar(&f.authFailuresPerAddr, "auth-failures-per-addr", "DOCKET_AUTH_FAILURES_PER_ADDR", httpapi.DefaultAuthFailuresPerAddr,
		"failed authentications a client address may make in a minute; then 429 until the minute ends")
	e.intVar(&f.authFailuresPerKey, "auth-failures-per-key", "DOCKET_AUTH_FAILURES_PER_KEY", httpapi.DefaultAuthFailuresPerKey,
		"failed authentications with one key id from one client address in a minute; then that address gets 429 for the key id until the minute ends")
	e.intVar(&f.searchesPerTenant, "searches-per-tenant", "DOCKET_SEARCHES_PER_TENANT", httpapi.DefaultSearchesPerTenant,
		"searches of one tenant running at once; more are refused with 429")
	e.durationVar(&f.searchTimeout, "search-timeout", "DOCKET_SEARCH_TIMEOUT", httpapi.DefaultSearchTimeout,
		"time one search may take; then 503")
}

func (f *httpFlags) check() error {
	if err := f.env.err(); err != nil {
		return err
	}
	switch {
	case f.adminKey != "" && f.adminKeyFile != "":
		return errors.New("--admin-key and --admin-key-file: give one")
	case f.adminKey != "" && checkAdminKey(f.adminKey) != nil:
		return checkAdminKey(f.adminKey)
	case f.maxConns == 0 || f.maxConns < -1:
		return fmt.Errorf("--max-conns %d: want a positive number or -1", f.maxConns)
	case f.maxConnsPerAddr == 0 || f.maxConnsPerAddr < -1:
		return fmt.Errorf("--max-conns-per-addr %d: want a positive number or -1", f.maxConnsPerAddr)
	case f.bodyTimeout <= 0:
		return fmt.Errorf("--body-timeout %s: want a positive duration", f.bodyTimeout)
	case f.maxStreamsPerKey < 1 || f.maxStreamsPerTenant < 1:
		return errors.New("--max-streams-per-key, --max-streams-per-tenant: want at least 1")
	case f.authFailuresPerAddr < 1 || f.authFailuresPerKey < 1 || f.searchesPerTenant < 1:
		return errors.New("--auth-failures-per-addr, --auth-failures-per-key, --searches-per-tenant: want at least 1")
	case f.searchTimeout <= 0:
		return fmt.Errorf("--search-timeout %s: want a positive duration", f.searchTimeout)
	case f.streamWriteTimeout <= 0:
		return fmt.Errorf("--stream-write-timeout %s: want a positive duration", f.streamWriteTimeout)
	}
	return nil
}

// listener returns ln with the connection caps, the overall one lowered
// to fit the process's open-file limit (with room for the store, blobs,
// the refusals themselves and the ops listener's connections).
func (f *httpFlags) listener(ln net.Listener, logger *slog.Logger) net.Listener {
	lim := httpapi.ConnLimits{Max: f.maxConns, PerAddr: f.maxConnsPerAddr}
	if room := openFileLimit() - 128 - f.reserved; room > 0 && (lim.Max < 0 || lim.Max > room) {
		logger.Warn("--max-conns lowered to fit the open-file limit", "max_conns", room)
		lim.Max = room
	}
	return httpapi.LimitListener(ln, lim)
}

func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		sf storeFlags
		vf serviceFlags
		hf httpFlags
		of opsFlags
	)
	sf.register(fs, getenv)
	vf.register(fs, getenv)
	hf.register(fs, getenv)
	of.register(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return parseError(err)
	}
	if err := hf.check(); err != nil {
		return err
	}
	if err := of.check(); err != nil {
		return err
	}
	if of.listen != "" {
		hf.reserved = of.maxConns
	}
	logger, err := sf.logger(stderr)
	if err != nil {
		return err
	}
	if hf.adminKey, err = hf.resolveAdminKey(sf.dataDir, stdout); err != nil {
		return err
	}
	sf.process = "serve"
	svc, err := openService(ctx, &sf, &vf, logger)
	if err != nil {
		return err
	}
	defer svc.Close()
	tp, stopTracing, err := tracerProvider(ctx, of.otlp)
	if err != nil {
		return err
	}
	defer stopTracing()
	svc.tracer = tp
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", hf.listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", hf.listen, err)
	}
	defer ln.Close()
	if err := firstTenant(ctx, svc, &sf, &vf, stdout); err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	vf.dispatch.localURL = base // dispatch.go: the default callback URL
	if sf.embedded() {
		remove, err := writeServeURL(sf.dataDir, base)
		if err != nil {
			return err
		}
		defer remove()
	}
	printAdminHelp(stdout, &sf, &hf, base)
	runOps, err := svc.opsRunner(ctx, &of, stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "dashboard: %s/\n", base)
	return svc.serve(ctx, ln, &vf, &hf, runOps)
}

// firstTenant creates a tenant when there is none and prints its key. On
// the embedded store, which is for trying Docket on one machine, the tenant
// gets the trial settings: the enterprise plan (1000 uploads an hour) and
// as many documents at once as this process works on.
func firstTenant(ctx context.Context, svc *service, sf *storeFlags, vf *serviceFlags, stdout io.Writer) error {
	tenants, err := svc.store.TenantList(ctx, &docket.TenantListParams{Limit: 1})
	if err != nil {
		return fmt.Errorf("list tenants: %w", err)
	}
	if len(tenants) > 0 {
		fmt.Fprintf(stdout, "api_key: (issued at first start; make another with: docket tenants key --tenant ID)\n")
		return nil
	}
	p := docket.TenantCreateParams{Name: "default", Plan: docket.PlanFree}
	if sf.embedded() {
		p.Plan, p.Concurrency = docket.PlanEnterprise, vf.concurrency
	}
	t, key, err := docket.Provision(ctx, svc.store, svc.client, p)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "tenant: %s\n", tenantSummary(t))
	fmt.Fprintf(stdout, "api_key: %s\n", key.Plain)
	return nil
}

// tenantSummary is the banner's line for a new tenant: its ID, plan and limits.
func tenantSummary(t *docket.Tenant) string {
	return fmt.Sprintf("%s (%s plan, %s per hour, %s at once)", t.ID, t.Plan,
		count(t.UploadsPerHour(), "upload", "uploads"), count(t.Concurrency, "document", "documents"))
}

// count is n followed by the noun's singular or plural.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// serve runs the API, the event feed, the workers and runOps (the ops
// listener) until ctx ends, then shuts them down: the HTTP server stops
// taking requests, the workers let running jobs finish within the grace
// period.
func (s *service) serve(ctx context.Context, ln net.Listener, vf *serviceFlags, hf *httpFlags, runOps func(context.Context) error) error {
	w, err := s.worker(vf)
	if err != nil {
		return err
	}
	events := feed.New(feed.Config{Client: s.client, Queue: pipeline.Queue, Logger: s.logger})
	api, err := httpapi.New(httpapi.Config{
		Store: s.store, Queue: s.client, Blobs: s.blobs, Embedder: s.embedder, Events: events,
		AdminKey: hf.adminKey, MaxUploadBytes: vf.maxUploadBytes, Logger: s.logger,
		BodyTimeout: hf.bodyTimeout, MaxStreamsPerKey: hf.maxStreamsPerKey, MaxStreamsPerTenant: hf.maxStreamsPerTenant,
		StreamWriteTimeout: hf.streamWriteTimeout, AuthFailuresPerAddr: hf.authFailuresPerAddr,
		AuthFailuresPerKey: hf.authFailuresPerKey, SearchesPerTenant: hf.searchesPerTenant, SearchTimeout: hf.searchTimeout,
		Metrics: s.metrics.Registry(), Dispatch: s.disp, Foreground: s.foreground,
	})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/", ops.TraceHTTP(s.tracer, api.Handler())) // a request's trace reaches the jobs it enqueues
	mux.Handle("GET /{$}", web.Handler())
	mux.Handle("GET /ui/", web.Handler())
	srv := httpapi.NewHTTPServer(mux, httpapi.ServerConfig{BodyTimeout: hf.bodyTimeout, Logger: s.logger})
	return runComponents(ctx, s.logger, srv, hf.listener(ln, s.logger), w.Run, events.Run, runOps,
		s.resumeDeletions) // tenants_resume.go: deletions cut short, finished in the background
}

// errStopped is the error of a component that returned before shutdown
// without one.
var errStopped = errors.New("stopped on its own")

// runComponents serves srv on ln and runs the other components until ctx
// ends or any of them fails (or returns early): then everything is shut
// down, so that a process whose worker or server died exits, with that
// error, instead of serving half. The HTTP server stops taking requests
// first; the components then see their context end.
func runComponents(ctx context.Context, logger *slog.Logger, srv *http.Server, ln net.Listener, runs ...func(context.Context) error) error {
	g, gctx := errgroup.WithContext(ctx)
	srv.BaseContext = func(net.Listener) context.Context { return gctx }
	for _, run := range runs {
		g.Go(func() error {
			err := run(gctx)
			if gctx.Err() == nil { // returned before shutdown: stop the rest
				return cmp.Or(err, errStopped)
			}
			return err
		})
	}
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("http: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		shutdown(srv, logger)
		return nil
	})
	logger.Info("serving", "addr", ln.Addr().String())
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		logger.Error("a component failed; shut down", "error", err)
		return err
	}
	return nil
}

// shutdown stops the HTTP server: new connections are refused at once and
// requests in flight (event streams end with the server's context) get 10 s.
func shutdown(srv *http.Server, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		logger.Warn("http shutdown", "error", err)
		_ = srv.Close()
	}
}

func runWorker(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		sf storeFlags
		vf serviceFlags
		of opsFlags
	)
	sf.register(fs, getenv)
	vf.register(fs, getenv)
	of.register(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return parseError(err)
	}
	if err := of.check(); err != nil {
		return err
	}
	logger, err := sf.logger(stderr)
	if err != nil {
		return err
	}
	sf.process = "worker"
	svc, err := openService(ctx, &sf, &vf, logger)
	if err != nil {
		return err
	}
	defer svc.Close()
	warnLocalBlobs(logger, &sf, svc.blobs)
	tp, stopTracing, err := tracerProvider(ctx, of.otlp)
	if err != nil {
		return err
	}
	defer stopTracing()
	svc.tracer = tp
	w, err := svc.worker(&vf)
	if err != nil {
		return err
	}
	runOps, err := svc.opsRunner(ctx, &of, stdout)
	if err != nil {
		return err
	}
	// The ops listener outlives the workers' drain, so /metrics and
	// /readyz answer during a graceful shutdown.
	opsCtx, stopOps := context.WithCancel(context.WithoutCancel(ctx))
	opsDone := make(chan error, 1)
	go func() { opsDone <- runOps(opsCtx) }()
	resumed := make(chan struct{}) // tenants_resume.go: deletions cut short, finished in the background
	go func() {
		defer close(resumed)
		resumeTenantDeletions(ctx, svc.store, svc.blobs, logger)
	}()
	err = w.Run(ctx)
	<-resumed
	stopOps()
	return errors.Join(err, <-opsDone)
}

func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return parseError(err)
	}
	if _, err := sf.logger(stderr); err != nil {
		return err
	}
	d, err := sf.open(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "docket: schema up to date")
	return errors.Join(d.Close())
}
