package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/ops"
	"github.com/docketq/docket/pipeline"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/sqlite"
)

// opsFlags configure the ops listener: metrics, liveness and readiness.
type opsFlags struct {
	listen            string
	maxConns          int
	maxConnsPerAddr   int
	readHeaderTimeout time.Duration
	idleTimeout       time.Duration
	topTenants        int
	interval          time.Duration
	otlp              string
	env               envFlags
}

func (f *opsFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	f.env = envFlags{fs: fs, getenv: getenv}
	e := &f.env
	e.stringVar(&f.listen, "ops-listen", "DOCKET_OPS_LISTEN", "",
		"address of the ops listener, serving /metrics, /healthz and /readyz (e.g. 127.0.0.1:9090; port 0 picks one); empty: none. Keep it private")
	e.intVar(&f.maxConns, "ops-max-conns", "DOCKET_OPS_MAX_CONNS", ops.DefaultMaxConns,
		"open connections to the ops listener in all; more are refused with 503")
	e.intVar(&f.maxConnsPerAddr, "ops-max-conns-per-addr", "DOCKET_OPS_MAX_CONNS_PER_ADDR", ops.DefaultMaxConnsPerAddr,
		"open connections to the ops listener from one client IP address; more are refused with 503")
	e.durationVar(&f.readHeaderTimeout, "ops-read-header-timeout", "DOCKET_OPS_READ_HEADER_TIMEOUT", httpapi.DefaultReadHeaderTimeout,
		"time a request's headers may take to arrive at the ops listener; then the connection closes")
	e.durationVar(&f.idleTimeout, "ops-idle-timeout", "DOCKET_OPS_IDLE_TIMEOUT", httpapi.DefaultIdleTimeout,
		"time a kept-alive connection to the ops listener may wait for its next request; then it closes")
	e.intVar(&f.topTenants, "metrics-top-tenants", "DOCKET_METRICS_TOP_TENANTS", ops.DefaultTopTenants,
		"tenants with the deepest backlogs that get a metrics series of their own")
	e.durationVar(&f.interval, "metrics-interval", "DOCKET_METRICS_INTERVAL", ops.DefaultPollInterval,
		"how often the store's gauges (backlog, stuck and failed jobs, vacuum, pools) are read")
	e.stringVar(&f.otlp, "otlp-endpoint", "DOCKET_OTLP_ENDPOINT", "",
		"OpenTelemetry collector (OTLP/HTTP, e.g. http://127.0.0.1:4318) that job spans are sent to; empty: none")
}

func (f *opsFlags) check() error {
	if err := f.env.err(); err != nil {
		return err
	}
	switch {
	case f.maxConns < 1 || f.maxConnsPerAddr < 1:
		return errors.New("--ops-max-conns, --ops-max-conns-per-addr: want at least 1")
	case f.readHeaderTimeout <= 0 || f.idleTimeout <= 0:
		return errors.New("--ops-read-header-timeout, --ops-idle-timeout: want a positive duration")
	case f.topTenants < 1 || f.topTenants > 1000:
		return fmt.Errorf("--metrics-top-tenants %d: want 1 to 1000", f.topTenants)
	case f.interval < time.Second:
		return fmt.Errorf("--metrics-interval %s: want at least 1s", f.interval)
	}
	return checkOTLPEndpoint(f.otlp)
}

// opsRunner listens on --ops-listen, when set, and returns the function
// that, until ctx ends, counts the client's enqueues and rescues and, with
// a listener, reads the store's gauges and serves the ops listener.
func (s *service) opsRunner(ctx context.Context, f *opsFlags, stdout io.Writer) (func(ctx context.Context) error, error) {
	watch := s.metrics.Watch(s.client.Bus())
	if f.listen == "" {
		return watch, nil
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", f.listen)
	if err != nil {
		return nil, fmt.Errorf("--ops-listen %s: %w", f.listen, err)
	}
	fmt.Fprintf(stdout, "ops: http://%s/metrics\n", ln.Addr())
	poller := ops.NewPoller(s.metrics, ops.PollerConfig{
		Monitor: s.store, Client: s.client, StatsQueue: pipeline.Queue,
		NotifyUsage: notifyUsage(s.driver), Wraparound: wraparound(s.store), Pools: poolStats(s.driver),
		Interval: f.interval, TopTenants: f.topTenants, Logger: s.logger,
	})
	h := ops.Handler(ops.HandlerConfig{Gatherer: s.metrics.Registry(), Ready: func(ctx context.Context) error {
		_, err := s.client.Stats(ctx, pipeline.Queue)
		return err
	}})
	srv := httpapi.NewHTTPServer(h, httpapi.ServerConfig{
		ReadHeaderTimeout: f.readHeaderTimeout, IdleTimeout: f.idleTimeout, Logger: s.logger,
	})
	ln = httpapi.LimitListener(ln, httpapi.ConnLimits{Max: f.maxConns, PerAddr: f.maxConnsPerAddr})
	return func(ctx context.Context) error {
		var wg sync.WaitGroup
		errs := make(chan error, 3)
		wg.Go(func() { errs <- watch(ctx) })
		wg.Go(func() { errs <- poller.Run(ctx) })
		wg.Go(func() {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("ops listener: %w", err)
			}
		})
		<-ctx.Done()
		shutdown(srv, s.logger)
		wg.Wait()
		close(errs)
		var all []error
		for err := range errs {
			all = append(all, err)
		}
		return errors.Join(all...)
	}, nil
}

// notifyUsage reads PostgreSQL's LISTEN/NOTIFY queue use; nil on SQLite.
func notifyUsage(d driver.Driver) func(context.Context) (float64, error) {
	if pd, ok := d.(*postgres.Driver); ok {
		return pd.NotifyQueueUsage
	}
	return nil
}

// wraparound reads PostgreSQL's transaction-id ages (pgstore.Store); nil
// on SQLite.
func wraparound(st docket.Store) func(context.Context) (docket.Wraparound, error) {
	if w, ok := st.(interface {
		Wraparound(context.Context) (docket.Wraparound, error)
	}); ok {
		return w.Wraparound
	}
	return nil
}

// poolStats reads the store's connection pool.
func poolStats(d driver.Driver) func() map[string]ops.PoolStats {
	switch d := d.(type) {
	case *postgres.Driver:
		return func() map[string]ops.PoolStats {
			st := d.Pool().Stat()
			return map[string]ops.PoolStats{"postgres": {InUse: int(st.AcquiredConns()), Idle: int(st.IdleConns()), Max: int(st.MaxConns())}}
		}
	case *sqlite.Driver:
		return func() map[string]ops.PoolStats {
			st := d.DB().Stats()
			return map[string]ops.PoolStats{"sqlite_writer": {InUse: st.InUse, Idle: st.Idle, Max: st.MaxOpenConnections}}
		}
	}
	return nil
}
