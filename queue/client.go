package queue

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/docketq/docket/queue/driver"
)

// Defaults used when a field is left zero.
const (
	// MaxArgsBytes caps the encoded size of a job's arguments.
	MaxArgsBytes = 1 << 20
	// MaxMetadataEntries and MaxMetadataBytes cap a job's metadata: pairs,
	// and the bytes of their keys and values together.
	MaxMetadataEntries = 32
	MaxMetadataBytes   = 4 << 10
)

// ClientConfig configures a Client.
type ClientConfig struct {
	// Logger receives the client's logs. Nil discards them.
	Logger *slog.Logger
	// Metadata, when set, is called with the context of every enqueue;
	// the pairs it returns are added to each job's Metadata (pairs the
	// caller set win). ops.TraceMetadata carries the caller's trace
	// context this way, so a job's spans join the enqueuing request's
	// trace without each call site knowing about tracing.
	Metadata func(ctx context.Context) map[string]string
}

// Client enqueues and inspects jobs. It is safe for concurrent use. A Worker
// built on a Client shares its event bus, so events of jobs worked in this
// process reach the client's subscribers.
type Client struct {
	driver   driver.Driver
	exec     driver.Executor
	bus      *Bus
	logger   *slog.Logger
	metadata func(context.Context) map[string]string
	wake     wakeHooks // this process's claim loops, woken on a resume or an insert
}

// NewClient returns a client that stores jobs through d.
func NewClient(d driver.Driver, cfg ClientConfig) *Client {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Client{driver: d, exec: d.Executor(), bus: NewBus(), logger: logger, metadata: cfg.Metadata}
}

// Bus returns the in-process event bus.
func (c *Client) Bus() *Bus { return c.bus }

// EnqueueParams describes a job to enqueue.
type EnqueueParams struct {
	Queue    string // empty: DefaultQueue
	Kind     string // required; selects the handler
	TenantID string // required; the partition key
	// Args are the handler's input: a json.RawMessage is stored as is,
	// anything else is encoded with encoding/json.
	Args        any
	Priority    int       // higher starts first within the tenant; -1000..1000
	MaxAttempts int       // 0: DefaultMaxAttempts
	RunAt       time.Time // zero: now; else within the years 1 to 9999 (UTC)
	// UniqueKey makes the enqueue idempotent per tenant: a second enqueue
	// with the same key returns the first job.
	UniqueKey string
	// FailOnTimeout fails the job when its lease expires instead of
	// retrying it.
	FailOnTimeout bool
	// Metadata travel with the job (Job.Metadata) without being its input:
	// the trace context of the enqueuing request (ops.InjectTrace), a
	// request id. At most MaxMetadataEntries pairs and MaxMetadataBytes of
	// keys and values; keys are not empty.
	Metadata map[string]string
	// Cost is what the job weighs in its tenant's fair share, in any unit
	// the application keeps to (pages, megabytes); 0 means 1, the most is
	// MaxCost. The claim shares the workers between tenants by the cost
	// it gives each (over its weight, SetTenantWeight), not by count.
	Cost int
}

// MaxCost is the largest EnqueueParams.Cost.
const MaxCost = 1 << 30

// Enqueue stores a job and returns it. Duplicate is set when UniqueKey
// matched an existing job, which is returned instead.
func (c *Client) Enqueue(ctx context.Context, p *EnqueueParams) (*InsertResult, error) {
	res, err := c.insert(ctx, c.exec, false, []*EnqueueParams{p})
	if err != nil {
		return nil, err
	}
	return &res[0], nil
}

// EnqueueTx stores a job inside the caller's transaction (pgx.Tx for
// PostgreSQL, *sql.Tx for SQLite): the job exists if and only if the
// transaction commits. It wakes this process's workers but publishes no
// EventInserted: call PublishInserted after the commit.
func (c *Client) EnqueueTx(ctx context.Context, tx any, p *EnqueueParams) (*InsertResult, error) {
	exec, err := c.driver.UnwrapTx(tx)
	if err != nil {
		return nil, err
	}
	res, err := c.insert(ctx, exec, true, []*EnqueueParams{p})
	if err != nil {
		return nil, err
	}
	return &res[0], nil
}

// EnqueueMany stores several jobs in one transaction.
func (c *Client) EnqueueMany(ctx context.Context, ps []*EnqueueParams) ([]InsertResult, error) {
	return c.insert(ctx, c.exec, false, ps)
}

// EnqueueManyTx stores several jobs inside the caller's transaction; as
// EnqueueTx, it publishes no EventInserted (PublishInserted).
func (c *Client) EnqueueManyTx(ctx context.Context, tx any, ps []*EnqueueParams) ([]InsertResult, error) {
	exec, err := c.driver.UnwrapTx(tx)
	if err != nil {
		return nil, err
	}
	return c.insert(ctx, exec, true, ps)
}

func (c *Client) insert(ctx context.Context, exec driver.Executor, inTx bool, ps []*EnqueueParams) ([]InsertResult, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	var extra map[string]string
	if c.metadata != nil {
		extra = c.metadata(ctx)
	}
	params := make([]*driver.JobInsertParams, len(ps))
	for i, p := range ps {
		if p == nil {
			return nil, fmt.Errorf("%w: job %d of %d has no params", ErrInvalid, i+1, len(ps))
		}
		if len(extra) > 0 {
			merged := maps.Clone(extra)
			maps.Copy(merged, p.Metadata)
			cp := *p
			cp.Metadata = merged
			p = &cp
		}
		ip, err := p.toInsert()
		if err != nil {
			return nil, err
		}
		params[i] = ip
	}
	res, err := exec.JobInsertMany(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("enqueue: %w", err)
	}
	jobs := make([]*Job, 0, len(res))
	for _, r := range res {
		if !r.Duplicate {
			jobs = append(jobs, r.Job)
		}
	}
	c.inserted(inTx, jobs...)
	return res, nil
}

func (p *EnqueueParams) toInsert() (*driver.JobInsertParams, error) {
	queue := p.Queue
	if queue == "" {
		queue = DefaultQueue
	}
	if err := ValidateQueueName(queue); err != nil {
		return nil, err
	}
	switch {
	case p.Kind == "" || len(p.Kind) > 200:
		return nil, fmt.Errorf("%w: kind must be 1-200 bytes", ErrInvalid)
	case p.TenantID == "" || len(p.TenantID) > 200:
		return nil, fmt.Errorf("%w: tenant id must be 1-200 bytes", ErrInvalid)
	case p.Priority < -1000 || p.Priority > 1000:
		return nil, fmt.Errorf("%w: priority %d outside -1000..1000", ErrInvalid, p.Priority)
	case p.MaxAttempts < 0 || p.MaxAttempts > 1000:
		return nil, fmt.Errorf("%w: max attempts %d outside 0..1000", ErrInvalid, p.MaxAttempts)
	case p.Cost < 0 || p.Cost > MaxCost:
		return nil, fmt.Errorf("%w: cost %d outside 0..%d", ErrInvalid, p.Cost, MaxCost)
	case len(p.UniqueKey) > 255:
		return nil, fmt.Errorf("%w: unique key longer than 255 bytes", ErrInvalid)
	case !storable(p.Kind) || !storable(p.TenantID) || !storable(p.UniqueKey):
		return nil, fmt.Errorf("%w: kind, tenant id and unique key must be UTF-8 without NUL bytes", ErrInvalid)
	case !p.RunAt.IsZero() && (p.RunAt.UTC().Year() < 1 || p.RunAt.UTC().Year() > 9999):
		// Beyond these, SQLite's microseconds wrap round (a job for the
		// year 300000 ran at once), PostgreSQL refuses the time, and
		// encoding/json cannot show it.
		return nil, fmt.Errorf("%w: run at %s: outside the years 1 to 9999", ErrInvalid, p.RunAt.UTC().Format(time.RFC3339))
	}
	if err := validateMetadata(p.Metadata); err != nil {
		return nil, err
	}
	args, err := encodeArgs(p.Args)
	if err != nil {
		return nil, err
	}
	maxAttempts := p.MaxAttempts
	if maxAttempts == 0 {
		maxAttempts = DefaultMaxAttempts
	}
	return &driver.JobInsertParams{
		Queue: queue, Kind: p.Kind, TenantID: p.TenantID, Args: args,
		Priority: p.Priority, MaxAttempts: maxAttempts, RunAt: p.RunAt,
		UniqueKey: p.UniqueKey, FailOnTimeout: p.FailOnTimeout, Metadata: p.Metadata,
		Cost: max(p.Cost, 1),
	}, nil
}

func encodeArgs(v any) (json.RawMessage, error) {
	var raw json.RawMessage
	switch a := v.(type) {
	case nil:
		raw = json.RawMessage("{}")
	case json.RawMessage:
		if !json.Valid(a) {
			return nil, fmt.Errorf("%w: args are not valid JSON", ErrInvalid)
		}
		raw = a
	default:
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("%w: encode args: %v", ErrInvalid, err) //nolint:errorlint // the cause is not part of the API
		}
		raw = b
	}
	if len(raw) > MaxArgsBytes {
		return nil, fmt.Errorf("%w: args are %d bytes, over the %d limit", ErrInvalid, len(raw), MaxArgsBytes)
	}
	if !jsonStorable(raw) {
		return nil, fmt.Errorf("%w: args must be UTF-8, without \\u0000 or half a surrogate pair", ErrInvalid)
	}
	return raw, nil
}

// storable reports whether s is text both stores keep as given: UTF-8
// without NUL bytes. PostgreSQL refuses the others, and SQLite kept them,
// so an application tried on the embedded default failed in production
// (TestClient_EnqueueTextNotStorable).
func storable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// jsonStorable reports whether PostgreSQL's jsonb takes the JSON document
// b, which SQLite keeps as it is: UTF-8, and no \u escape of a NUL or of
// half a surrogate pair (jsonb refuses both). Escapes are two bytes but
// \uXXXX, so stepping over each backslash's escape keeps an escaped
// backslash followed by "u0000" (text, not a NUL) apart. Bytes json.Valid
// refuses are left to it.
func jsonStorable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	i := bytes.IndexByte(b, '\\')
	for i >= 0 && i+1 < len(b) {
		next := i + 2
		if b[i+1] == 'u' {
			r, ok := hex4(b, i+2)
			if !ok {
				return true
			}
			next = i + 6
			switch {
			case r == 0, r >= 0xDC00 && r <= 0xDFFF:
				return false
			case r >= 0xD800 && r <= 0xDBFF:
				if next+1 >= len(b) || b[next] != '\\' || b[next+1] != 'u' {
					return false
				}
				if lo, ok := hex4(b, next+2); !ok || lo < 0xDC00 || lo > 0xDFFF {
					return false
				}
				next += 6
			}
		}
		j := bytes.IndexByte(b[next:], '\\')
		if j < 0 {
			return true
		}
		i = next + j
	}
	return true
}

// hex4 is the value of the four hex digits at b[at:].
func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[at:at+4]), 16, 16)
	return rune(v), err == nil
}

// validateMetadata checks a job's metadata against MaxMetadataEntries and
// MaxMetadataBytes; keys must not be empty.
func validateMetadata(m map[string]string) error {
	if len(m) > MaxMetadataEntries {
		return fmt.Errorf("%w: %d metadata entries, at most %d", ErrInvalid, len(m), MaxMetadataEntries)
	}
	size := 0
	for k, v := range m {
		if k == "" {
			return fmt.Errorf("%w: empty metadata key", ErrInvalid)
		}
		if !storable(k) || !storable(v) {
			return fmt.Errorf("%w: metadata must be UTF-8 without NUL bytes", ErrInvalid)
		}
		size += len(k) + len(v)
	}
	if size > MaxMetadataBytes {
		return fmt.Errorf("%w: metadata of %d bytes, at most %d", ErrInvalid, size, MaxMetadataBytes)
	}
	return nil
}
