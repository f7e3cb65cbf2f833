// Package dispatch runs jobs of chosen kinds on HTTP endpoints written in
// any language (docs/dispatch.md). For each attempt the worker
// POSTs the job, signed per Standard Webhooks (package webhook), to the
// kind's URL. The endpoint answers 2xx with the JSON result (the job
// completes with it), or 202 and later reports progress and the outcome
// through the API (httpapi's /v1/dispatch routes) with the attempt's lease
// token, fenced like any handler's writes; meanwhile the worker keeps the
// lease alive and polls the job until the endpoint has ended the attempt.
//
// Failures retry through the queue's backoff with the same webhook-id and
// a new webhook-timestamp; 429 and 503 with Retry-After snooze the job;
// 410 fails that job for good (and no other); redirects are never
// followed. Every connection passes the Guard (SSRF policy) before
// connect(2). The errors jobs store name an endpoint by its scheme and
// host only: its path and query may hold secrets and tenants read them.
package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/webhook"
)

// Defaults for Endpoint and Config fields left zero.
const (
	DefaultTimeout      = 20 * time.Second
	DefaultPollInterval = time.Second
	// MaxResultBytes caps a synchronous answer's body (the job's result).
	MaxResultBytes = 1 << 20
	// DefaultMaxArgsBytes caps the args of a job a tenant submits through
	// the API (Config.MaxArgsBytes); MaxArgsBytesLimit is the largest cap
	// (the API's JSON body limit).
	DefaultMaxArgsBytes = 64 << 10
	MaxArgsBytesLimit   = 1 << 20
	// MinRetryAfter and MaxRetryAfter bound the snooze a Retry-After
	// asks for (a "0" would otherwise call again at once, in a loop).
	MinRetryAfter = time.Second
	MaxRetryAfter = time.Hour
)

// ErrGone is the error of a job whose endpoint answered 410 Gone: that
// job fails without retries. The answer is about the job (the endpoint
// may read its arguments), so the kind's other jobs are still sent.
var ErrGone = errors.New("dispatch: endpoint answered 410 Gone")

// Endpoint maps a job kind to the URL that handles it.
type Endpoint struct {
	// Kind is the job kind the endpoint handles.
	Kind string
	// URL receives the POSTs: http or https.
	URL string
	// Secrets sign the requests ("whsec_..."; 24 to 64 bytes). Several
	// while a secret is rotated: each request carries a signature by each.
	Secrets []string
	// Timeout bounds one request, answer included. Default DefaultTimeout.
	Timeout time.Duration
}

// Config configures a Dispatcher.
type Config struct {
	// Client reads jobs while an endpoint works asynchronously. Required.
	Client *queue.Client
	// Endpoints, one per kind. At least one.
	Endpoints []Endpoint
	// Guard is the SSRF policy of every call. Nil: the zero Guard (public
	// addresses on ports 80 and 443 only).
	Guard *Guard
	// CallbackURL is the base URL of the Docket API that endpoints report
	// to asynchronously ("https://docket.example.com"); the payload names
	// its /v1/dispatch routes. Empty: the payload carries the paths only.
	CallbackURL string
	// PollInterval is how often a job an endpoint answered 202 for is
	// read to see whether the endpoint ended it. Default
	// DefaultPollInterval.
	PollInterval time.Duration
	// MaxArgsBytes caps the args (encoded JSON) of a job a tenant submits
	// through the API; larger ones are refused before anything is stored.
	// Default DefaultMaxArgsBytes; at most MaxArgsBytesLimit.
	MaxArgsBytes int
	// Logger receives one line per call. Nil discards.
	Logger *slog.Logger
	// Now is the clock of webhook-timestamp. Default time.Now.
	Now func() time.Time
}

// Dispatcher holds the endpoints of the dispatched kinds.
type Dispatcher struct {
	cfg    Config
	http   *http.Client
	logger *slog.Logger
	eps    map[string]*endpoint
}

// endpoint is the queue.Handler of one kind.
type endpoint struct {
	d *Dispatcher
	Endpoint
	signer *webhook.Signer
	keys   [][]byte  // the secrets, decoded: callback tokens' MAC keys
	red    *redactor // keeps the URL's path and query out of job errors
}

// New checks cfg: kinds unique and named, URLs that pass CheckURL,
// secrets that parse, timeouts not negative.
func New(cfg Config) (*Dispatcher, error) {
	if cfg.Client == nil || len(cfg.Endpoints) == 0 {
		return nil, errors.New("dispatch: Client and at least one endpoint are required")
	}
	if cfg.Guard == nil {
		cfg.Guard = &Guard{}
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxArgsBytes < 0 || cfg.MaxArgsBytes > MaxArgsBytesLimit {
		return nil, fmt.Errorf("dispatch: MaxArgsBytes %d: want 0 (default %d) to %d", cfg.MaxArgsBytes, DefaultMaxArgsBytes, MaxArgsBytesLimit)
	}
	if cfg.MaxArgsBytes == 0 {
		cfg.MaxArgsBytes = DefaultMaxArgsBytes
	}
	if cfg.CallbackURL != "" {
		if _, err := CheckURL(cfg.CallbackURL); err != nil {
			return nil, fmt.Errorf("dispatch: callback URL: %w", err)
		}
		cfg.CallbackURL = strings.TrimSuffix(cfg.CallbackURL, "/")
	}
	d := &Dispatcher{cfg: cfg, http: cfg.Guard.Client(), logger: cfg.Logger, eps: map[string]*endpoint{}}
	if d.logger == nil {
		d.logger = slog.New(slog.DiscardHandler)
	}
	for _, ep := range cfg.Endpoints {
		if ep.Kind == "" {
			return nil, errors.New("dispatch: an endpoint has no kind")
		}
		if _, dup := d.eps[ep.Kind]; dup {
			return nil, fmt.Errorf("dispatch: kind %q has two endpoints", ep.Kind)
		}
		if _, err := CheckURL(ep.URL); err != nil {
			return nil, fmt.Errorf("dispatch: kind %q: %w", ep.Kind, err)
		}
		s, err := webhook.NewSigner(ep.Secrets...)
		if err != nil {
			return nil, fmt.Errorf("dispatch: kind %q: %w", ep.Kind, err)
		}
		if ep.Timeout < 0 {
			return nil, fmt.Errorf("dispatch: kind %q: negative timeout %s", ep.Kind, ep.Timeout)
		}
		if ep.Timeout == 0 {
			ep.Timeout = DefaultTimeout
		}
		keys := make([][]byte, len(ep.Secrets))
		for i, sec := range ep.Secrets {
			keys[i], _ = webhook.ParseSecret(sec) // NewSigner checked them
		}
		red, err := newRedactor(ep.URL)
		if err != nil {
			return nil, fmt.Errorf("dispatch: kind %q: %w", ep.Kind, err)
		}
		d.eps[ep.Kind] = &endpoint{d: d, Endpoint: ep, signer: s, keys: keys, red: red}
	}
	return d, nil
}

// Kinds returns the dispatched kinds, sorted.
func (d *Dispatcher) Kinds() []string {
	out := make([]string, 0, len(d.eps))
	for k := range d.eps {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// MaxArgsBytes is the cap on the args of a job submitted through the API.
func (d *Dispatcher) MaxArgsBytes() int { return d.cfg.MaxArgsBytes }

// Handlers returns the queue handlers of the dispatched kinds, to merge
// into queue.WorkerConfig.Handlers.
func (d *Dispatcher) Handlers() map[string]queue.HandlerConfig {
	hs := make(map[string]queue.HandlerConfig, len(d.eps))
	for k, ep := range d.eps {
		hs[k] = queue.HandlerConfig{Handler: ep}
	}
	return hs
}

// Work sends one attempt of a job to the endpoint and turns the answer
// into the attempt's outcome. Its error, which the job stores and its
// tenant reads, holds no part of the URL past the scheme and host.
func (ep *endpoint) Work(ctx context.Context, t *queue.Task) error {
	return ep.red.clean(ep.work(ctx, t))
}

func (ep *endpoint) work(ctx context.Context, t *queue.Task) error {
	p, err := ep.d.payload(t)
	if err != nil {
		return queue.Permanent(err)
	}
	body, err := json.Marshal(p)
	if err != nil {
		return queue.Permanent(fmt.Errorf("dispatch: encode job: %w", err))
	}
	rctx, cancel := context.WithTimeout(ctx, ep.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, ep.URL, strings.NewReader(string(body)))
	if err != nil {
		return queue.Permanent(fmt.Errorf("dispatch: %w", err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "docket-dispatch/1")
	ep.signer.SetHeaders(req.Header, MessageID(t.Job.ID), ep.d.cfg.Now(), body)
	start := time.Now()
	resp, err := ep.d.http.Do(req)
	if err != nil {
		err = ep.red.transportError(err)
		if errors.Is(err, ErrBlocked) {
			return queue.Permanent(fmt.Errorf("dispatch %s: %w", ep.Kind, err))
		}
		return fmt.Errorf("dispatch %s: %w", ep.Kind, err)
	}
	defer func() { _ = resp.Body.Close() }()
	ep.d.logger.Info("dispatched", "kind", ep.Kind, "job_id", t.Job.ID, "attempt", t.Job.Attempt,
		"status", resp.StatusCode, "duration", time.Since(start).Round(time.Millisecond))
	return ep.answer(ctx, t, resp)
}

// MessageID is the webhook-id of a job's requests: the same for every
// attempt, so an endpoint can recognise a repeat.
func MessageID(jobID int64) string { return "job_" + strconv.FormatInt(jobID, 10) }
