package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/docketq/docket/dispatch"
	"github.com/docketq/docket/ops"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/webhook"
)

// dispatchFlags configure HTTP dispatch (docs/dispatch.md): which job
// kinds are POSTed to which endpoints. The endpoints, their secrets and the
// SSRF allow-list are read from a JSON file (--dispatch-config), so that
// secrets stay out of the process list.
type dispatchFlags struct {
	path string
	file *dispatchFile // read by check; nil without --dispatch-config
	// localURL is the API's own URL (serve), the default callback URL.
	localURL string
}

// dispatchFile is the --dispatch-config file.
type dispatchFile struct {
	// CallbackURL is the API the endpoints report to; default, under
	// serve, the server's own address.
	CallbackURL string `json:"callback_url"`
	// Allow lists address ranges ("127.0.0.1/32", "10.1.0.0/16") called
	// although private, loopback or link-local, on any port.
	Allow []string `json:"allow"`
	// Ports public addresses may be called on; default 80 and 443.
	Ports []int `json:"ports"`
	// Concurrency is how many dispatched jobs this process runs at once;
	// default 10.
	Concurrency int `json:"concurrency"`
	// PollInterval: how often a job answered 202 is read; default 1s.
	PollInterval jsonDuration `json:"poll_interval"`
	// MaxArgsBytes caps the args of a job a tenant submits through the
	// API; default dispatch.DefaultMaxArgsBytes.
	MaxArgsBytes int `json:"max_args_bytes"`
	Endpoints    []struct {
		Kind    string       `json:"kind"`
		URL     string       `json:"url"`
		Secrets []string     `json:"secrets"`
		Timeout jsonDuration `json:"timeout"`
		// JobTimeout bounds a whole attempt, an asynchronous one
		// included, so an endpoint that never reports frees its slot;
		// default defaultJobTimeout.
		JobTimeout jsonDuration `json:"job_timeout"`
	} `json:"endpoints"`
}

// defaultJobTimeout bounds an attempt of a dispatched job whose endpoint
// has no job_timeout.
const defaultJobTimeout = time.Hour

// jsonDuration is a duration written as in Go ("20s", "1m30s").
type jsonDuration time.Duration

func (d *jsonDuration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration such as \"20s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = jsonDuration(v)
	return nil
}

func (f *dispatchFlags) register(e *envFlags) {
	e.stringVar(&f.path, "dispatch-config", "DOCKET_DISPATCH_CONFIG", "",
		"JSON file mapping job kinds to HTTP endpoints (URL, whsec_ secrets, timeout) and the addresses they may be on; see docs/dispatch.md")
}

// check reads and checks the file: a bad endpoint is an error at start.
func (f *dispatchFlags) check() error {
	if f.path == "" {
		return nil
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		return fmt.Errorf("--dispatch-config: %w", err)
	}
	var file dispatchFile
	if err := json.Unmarshal(b, &file); err != nil {
		return fmt.Errorf("--dispatch-config %s: %w", f.path, err)
	}
	if len(file.Endpoints) == 0 {
		return fmt.Errorf("--dispatch-config %s: no endpoints", f.path)
	}
	if file.Concurrency < 0 || file.Concurrency > 1000 {
		return fmt.Errorf("--dispatch-config %s: concurrency %d: want 1 to 1000", f.path, file.Concurrency)
	}
	if file.MaxArgsBytes < 0 || file.MaxArgsBytes > dispatch.MaxArgsBytesLimit {
		return fmt.Errorf("--dispatch-config %s: max_args_bytes %d: want 1 to %d (0: %d)",
			f.path, file.MaxArgsBytes, dispatch.MaxArgsBytesLimit, dispatch.DefaultMaxArgsBytes)
	}
	if _, err := file.guard(); err != nil {
		return fmt.Errorf("--dispatch-config %s: %w", f.path, err)
	}
	kinds := map[string]bool{}
	for _, ep := range file.Endpoints {
		if ep.Kind == "" || kinds[ep.Kind] {
			return fmt.Errorf("--dispatch-config %s: endpoint kind %q empty or repeated", f.path, ep.Kind)
		}
		kinds[ep.Kind] = true
		if _, err := dispatch.CheckURL(ep.URL); err != nil {
			return fmt.Errorf("--dispatch-config %s: kind %s: %w", f.path, ep.Kind, err)
		}
		if len(ep.Secrets) == 0 {
			return fmt.Errorf("--dispatch-config %s: kind %s: no secrets (make one: echo whsec_$(head -c 32 /dev/urandom | base64))", f.path, ep.Kind)
		}
		for _, s := range ep.Secrets {
			if _, err := webhook.ParseSecret(s); err != nil {
				return fmt.Errorf("--dispatch-config %s: kind %s: %w", f.path, ep.Kind, err)
			}
		}
		if ep.Timeout < 0 || ep.JobTimeout < 0 {
			return fmt.Errorf("--dispatch-config %s: kind %s: negative timeout", f.path, ep.Kind)
		}
	}
	f.file = &file
	return nil
}

func (file *dispatchFile) guard() (*dispatch.Guard, error) {
	g := &dispatch.Guard{Ports: file.Ports}
	for _, a := range file.Allow {
		p, err := netip.ParsePrefix(a)
		if err != nil {
			addr, aerr := netip.ParseAddr(a)
			if aerr != nil {
				return nil, fmt.Errorf("allow %q: want an address or a CIDR range", a)
			}
			p = netip.PrefixFrom(addr, addr.BitLen())
		}
		g.Allow = append(g.Allow, p.Masked())
	}
	for _, p := range file.Ports {
		if p < 1 || p > 65535 {
			return nil, fmt.Errorf("port %d: want 1 to 65535", p)
		}
	}
	return g, nil
}

// addDispatch adds the dispatched kinds' handlers (traced like the
// pipeline's) and the dispatch queue to a worker's configuration.
func (s *service) addDispatch(cfg *queue.WorkerConfig, f *dispatchFlags) error {
	if f.file == nil {
		return nil
	}
	file := f.file
	g, err := file.guard()
	if err != nil {
		return err
	}
	dc := dispatch.Config{
		Client: s.client, Guard: g, CallbackURL: file.CallbackURL, Logger: s.logger,
		PollInterval: time.Duration(file.PollInterval), MaxArgsBytes: file.MaxArgsBytes,
	}
	if dc.CallbackURL == "" {
		dc.CallbackURL = f.localURL
	}
	jobTimeouts := map[string]time.Duration{}
	for _, ep := range file.Endpoints {
		dc.Endpoints = append(dc.Endpoints, dispatch.Endpoint{Kind: ep.Kind, URL: ep.URL, Secrets: ep.Secrets, Timeout: time.Duration(ep.Timeout)})
		jobTimeouts[ep.Kind] = cmp.Or(time.Duration(ep.JobTimeout), defaultJobTimeout)
	}
	d, err := dispatch.New(dc)
	if err != nil {
		return err
	}
	s.disp = d
	for kind, hc := range d.Handlers() {
		if _, taken := cfg.Handlers[kind]; taken {
			return fmt.Errorf("--dispatch-config: kind %q is handled by Docket itself", kind)
		}
		hc.Handler = ops.Traced(s.tracer, hc.Handler)
		hc.Timeout = jobTimeouts[kind]
		cfg.Handlers[kind] = hc
	}
	n := file.Concurrency
	if n == 0 {
		n = 10
	}
	cfg.Queues[dispatch.Queue] = queue.QueueConfig{MaxWorkers: n}
	if dc.CallbackURL == "" {
		s.logger.Warn("dispatch: no callback_url in --dispatch-config; endpoints that answer 202 get callback paths without a host")
	}
	return nil
}
