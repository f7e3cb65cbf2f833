// Package loadgen drives a running Docket server through its HTTP API as
// many tenants at once: it creates the tenants (admin API), uploads
// documents for all of them concurrently while the server's workers
// process them, follows each job to its end, and reports uploads per
// second, the latency of the 202, each tenant's completion latency, and
// how fairly the tenants were served. `docket load` is its command.
package loadgen

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Config is one load run.
type Config struct {
	// BaseURL is the server, e.g. http://127.0.0.1:8080.
	BaseURL string
	// AdminKey creates the run's tenants.
	AdminKey string
	// Tenants is how many tenants upload (default 10); Documents how many
	// documents they upload in all (default 100).
	Tenants, Documents int
	// Flood is the share of the documents the first tenant uploads, the
	// rest spread evenly over the others: 0 (the default) spreads every
	// document evenly; 0.5 makes tenant 1 a flood of half the load, which
	// must not starve the others.
	Flood float64
	// Concurrency is how many uploads are in flight at once (default 8).
	Concurrency int
	// Size is each document's size in bytes (default 16 KiB): plain text
	// of random words, different for every document.
	Size int
	// Plan and Concurrent are the plan and concurrency limit the tenants
	// are created with (defaults "enterprise", 2); RateLimit, when set,
	// their uploads per hour.
	Plan       string
	Concurrent int
	RateLimit  int
	// Timeout bounds the whole run (default 10 minutes); Poll is how often
	// an unfinished job is read (default 200 ms).
	Timeout, Poll time.Duration
	// Client is the HTTP client (default one with a 30 s timeout).
	Client *http.Client
	// Progress, when set, receives a line now and then.
	Progress func(format string, args ...any)
}

func (c *Config) setDefaults() error {
	if c.BaseURL == "" {
		return errors.New("loadgen: the server's URL is required")
	}
	if c.AdminKey == "" {
		return errors.New("loadgen: the admin key is required (it creates the tenants)")
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	c.Tenants = cmp.Or(c.Tenants, 10)
	c.Documents = cmp.Or(c.Documents, 100)
	c.Concurrency = cmp.Or(c.Concurrency, 8)
	c.Size = cmp.Or(c.Size, 16<<10)
	c.Plan = cmp.Or(c.Plan, "enterprise")
	c.Concurrent = cmp.Or(c.Concurrent, 2)
	c.Timeout = cmp.Or(c.Timeout, 10*time.Minute)
	c.Poll = cmp.Or(c.Poll, 200*time.Millisecond)
	switch {
	case c.Tenants < 1 || c.Documents < 1 || c.Concurrency < 1 || c.Size < 1:
		return errors.New("loadgen: tenants, documents, concurrency and size must be positive")
	case c.Flood < 0 || c.Flood >= 1:
		return fmt.Errorf("loadgen: flood %g: want a share in [0, 1)", c.Flood)
	case c.Flood > 0 && c.Tenants < 2:
		return errors.New("loadgen: a flood needs at least 2 tenants")
	}
	if c.Client == nil {
		c.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if c.Progress == nil {
		c.Progress = func(string, ...any) {}
	}
	return nil
}

// Report is what a run measured. Durations are in the JSON as
// milliseconds.
type Report struct {
	Tenants   int `json:"tenants"`
	Documents int `json:"documents"`
	// Accepted uploads answered 202; Refused counts 429 answers (each
	// retried after its Retry-After); Errors the uploads that failed
	// otherwise.
	Accepted int `json:"accepted"`
	Refused  int `json:"refused_429"`
	Errors   int `json:"errors"`
	// UploadSeconds is how long the uploads took, first to last answer;
	// UploadsPerSecond the accepted uploads over it.
	UploadSeconds    float64 `json:"upload_seconds"`
	UploadsPerSecond float64 `json:"uploads_per_second"`
	// Accept is the latency of the 202 answers.
	Accept Latency `json:"accept_latency"`
	// Completed, Failed: the jobs' ends; Unfinished were still pending
	// or running when the run timed out.
	Completed  int `json:"completed"`
	Failed     int `json:"failed"`
	Unfinished int `json:"unfinished"`
	// Seconds is the whole run, first upload to last job's end;
	// DocumentsPerSecond the completed documents over it.
	Seconds            float64 `json:"seconds"`
	DocumentsPerSecond float64 `json:"documents_per_second"`
	// PerTenant is each tenant's completion latency: from the upload's
	// 202 to the job's end, as the job records it.
	PerTenant []TenantReport `json:"per_tenant"`
	// Fairness is Jain's index (1 = every tenant served alike, 1/n = one
	// tenant served alone) of the tenants' completion rates, each
	// tenant's completed documents over the time from its first upload
	// to its last end, taken over the tenants of equal load (the flood
	// left out).
	Fairness float64 `json:"fairness"`
}

// TenantReport is one tenant's part of a run.
type TenantReport struct {
	Tenant     string  `json:"tenant"`
	Flood      bool    `json:"flood,omitempty"`
	Documents  int     `json:"documents"`
	Completed  int     `json:"completed"`
	Completion Latency `json:"completion_latency"`
	Rate       float64 `json:"documents_per_second"`
}

// Latency summarises a set of durations.
type Latency struct {
	N   int           `json:"n"`
	P50 time.Duration `json:"p50_ms"`
	P95 time.Duration `json:"p95_ms"`
	P99 time.Duration `json:"p99_ms"`
	Max time.Duration `json:"max_ms"`
}

// MarshalJSON writes the durations as milliseconds.
func (l Latency) MarshalJSON() ([]byte, error) {
	ms := func(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }
	return json.Marshal(map[string]any{"n": l.N, "p50_ms": ms(l.P50), "p95_ms": ms(l.P95), "p99_ms": ms(l.P99), "max_ms": ms(l.Max)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (l *Latency) UnmarshalJSON(b []byte) error {
	var v struct {
		N                  int
		P50, P95, P99, Max float64
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for name, dst := range map[string]any{"n": &v.N, "p50_ms": &v.P50, "p95_ms": &v.P95, "p99_ms": &v.P99, "max_ms": &v.Max} {
		if r, ok := raw[name]; ok {
			if err := json.Unmarshal(r, dst); err != nil {
				return fmt.Errorf("latency %s: %w", name, err)
			}
		}
	}
	d := func(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
	*l = Latency{N: v.N, P50: d(v.P50), P95: d(v.P95), P99: d(v.P99), Max: d(v.Max)}
	return nil
}

func summarise(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(math.Ceil(q*float64(len(s))))-1)] }
	return Latency{N: len(s), P50: at(0.50), P95: at(0.95), P99: at(0.99), Max: s[len(s)-1]}
}

// tenant is one of the run's tenants.
type tenant struct {
	id, key string
	flood   bool
}

// upload is one document of the run.
type upload struct {
	tenant   *tenant
	accepted time.Time // the 202 arrived
	jobID    string
	status   string // the job's last status
	// seenEnd is when the run saw the job ended (its clock); created and
	// ended are the job's times by the server's clock, which latencies
	// use, so that the client's clock and poll interval do not enter them.
	seenEnd, created, ended time.Time
}

// Run creates the tenants, uploads the documents, follows the jobs to
// their end and reports. It returns an error for a run that could not
// start (bad config, tenants not created) or was cancelled; a timeout
// ends the run with the unfinished jobs counted.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	run := &runner{cfg: &cfg}
	tenants, err := run.createTenants(ctx)
	if err != nil {
		return nil, err
	}
	uploads := plan(&cfg, tenants)
	start := time.Now()
	rep := &Report{Tenants: len(tenants), Documents: len(uploads)}
	if err := run.uploadAll(ctx, uploads, rep); err != nil {
		return nil, err
	}
	last := start
	for _, u := range uploads {
		last = later(last, u.accepted)
	}
	rep.UploadSeconds = last.Sub(start).Seconds()
	if rep.UploadSeconds > 0 {
		rep.UploadsPerSecond = float64(rep.Accepted) / rep.UploadSeconds
	}
	rep.Accept = summarise(run.acceptLatencies)
	cfg.Progress("uploaded %d documents (%d refused with 429, %d errors) in %.1fs; following the jobs",
		rep.Accepted, rep.Refused, rep.Errors, rep.UploadSeconds)
	if err := run.follow(ctx, uploads); err != nil && ctx.Err() == nil {
		return nil, err
	}
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	report(rep, tenants, uploads, start)
	return rep, nil
}

// plan assigns the documents to the tenants: Flood of them to the first,
// the rest round-robin over the others (all of them without a flood),
// interleaved so that every tenant uploads throughout the run.
func plan(cfg *Config, tenants []*tenant) []*upload {
	flood := int(math.Round(cfg.Flood * float64(cfg.Documents)))
	others := tenants
	if flood > 0 {
		tenants[0].flood = true
		others = tenants[1:]
	}
	out := make([]*upload, 0, cfg.Documents)
	f, o := 0, 0
	for i := range cfg.Documents {
		// Spread the flood's documents evenly among the others'.
		if f < flood && (cfg.Documents-flood == 0 || float64(f)/float64(flood) <= float64(i-f)/float64(cfg.Documents-flood)) {
			out = append(out, &upload{tenant: tenants[0]})
			f++
			continue
		}
		out = append(out, &upload{tenant: others[o%len(others)]})
		o++
	}
	return out
}

type runner struct {
	cfg *Config

	mu              sync.Mutex
	acceptLatencies []time.Duration
}

// createTenants creates the run's tenants through the admin API.
func (r *runner) createTenants(ctx context.Context) ([]*tenant, error) {
	run := strconv.FormatInt(time.Now().UnixMilli(), 36)
	out := make([]*tenant, r.cfg.Tenants)
	for i := range out {
		in := map[string]any{"name": fmt.Sprintf("load-%s-%d", run, i+1), "plan": r.cfg.Plan, "concurrency": r.cfg.Concurrent}
		if r.cfg.RateLimit > 0 {
			in["rate_limit"] = r.cfg.RateLimit
		}
		var resp struct {
			Tenant struct {
				ID string `json:"id"`
			} `json:"tenant"`
			APIKey string `json:"api_key"`
		}
		if err := r.call(ctx, http.MethodPost, "/v1/admin/tenants", r.cfg.AdminKey, in, http.StatusCreated, &resp); err != nil {
			return nil, fmt.Errorf("create tenant %d: %w", i+1, err)
		}
		if resp.Tenant.ID == "" || resp.APIKey == "" {
			return nil, fmt.Errorf("create tenant %d: the answer names no tenant or key", i+1)
		}
		out[i] = &tenant{id: resp.Tenant.ID, key: resp.APIKey}
	}
	return out, nil
}

// uploadAll uploads the documents, Concurrency at a time.
func (r *runner) uploadAll(ctx context.Context, uploads []*upload, rep *Report) error {
	work := make(chan *upload)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range r.cfg.Concurrency {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
			for u := range work {
				refused, err := r.upload(ctx, u, document(rng, r.cfg.Size))
				mu.Lock()
				rep.Refused += refused
				switch {
				case err != nil:
					rep.Errors++
					if rep.Errors <= 3 {
						r.cfg.Progress("upload for %s: %v", u.tenant.id, err)
					}
				default:
					rep.Accepted++
					if rep.Accepted%max(1, len(uploads)/10) == 0 {
						r.cfg.Progress("%d of %d uploads accepted", rep.Accepted, len(uploads))
					}
				}
				mu.Unlock()
			}
		})
	}
	for _, u := range uploads {
		select {
		case work <- u:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(work)
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// upload sends one document, waiting out 429s; it returns how many 429s
// it met.
func (r *runner) upload(ctx context.Context, u *upload, doc []byte) (int, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", fmt.Sprintf("load-%d.txt", rand.Int64()))
	if err != nil {
		return 0, err
	}
	_, _ = fw.Write(doc)
	if err := mw.Close(); err != nil {
		return 0, err
	}
	for refused := 0; ; refused++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.cfg.BaseURL+"/v1/documents", bytes.NewReader(body.Bytes()))
		if err != nil {
			return refused, err
		}
		req.Header.Set("Authorization", "Bearer "+u.tenant.key)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		sent := time.Now()
		resp, err := r.cfg.Client.Do(req)
		if err != nil {
			return refused, err
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusAccepted:
			var out struct {
				Job struct {
					ID string `json:"id"`
				} `json:"job"`
			}
			if err := json.Unmarshal(b, &out); err != nil || out.Job.ID == "" {
				return refused, fmt.Errorf("202 without a job id: %.200s", b)
			}
			now := time.Now()
			u.accepted, u.jobID = now, out.Job.ID
			r.mu.Lock()
			r.acceptLatencies = append(r.acceptLatencies, now.Sub(sent))
			r.mu.Unlock()
			return refused, nil
		case http.StatusTooManyRequests:
			wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			select {
			case <-time.After(time.Duration(max(wait, 1)) * time.Second):
			case <-ctx.Done():
				return refused + 1, ctx.Err()
			}
		default:
			return refused, fmt.Errorf("%s: %.200s", resp.Status, b)
		}
	}
}

// follow reads every accepted upload's job until it ends or ctx does.
func (r *runner) follow(ctx context.Context, uploads []*upload) error {
	open := make([]*upload, 0, len(uploads))
	for _, u := range uploads {
		if u.jobID != "" {
			open = append(open, u)
		}
	}
	tick := time.NewTicker(r.cfg.Poll)
	defer tick.Stop()
	for len(open) > 0 {
		sem := make(chan struct{}, r.cfg.Concurrency)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var firstErr error
		for _, u := range open {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if err := r.readJob(ctx, u); err != nil {
					mu.Lock()
					firstErr = cmp.Or(firstErr, err)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if firstErr != nil {
			return firstErr
		}
		open = slices.DeleteFunc(open, func(u *upload) bool { return !u.seenEnd.IsZero() })
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// readJob reads u's job and records its end.
func (r *runner) readJob(ctx context.Context, u *upload) error {
	var j struct {
		Status      string     `json:"status"`
		CreatedAt   time.Time  `json:"created_at"`
		UpdatedAt   time.Time  `json:"updated_at"`
		CompletedAt *time.Time `json:"completed_at"`
	}
	if err := r.call(ctx, http.MethodGet, "/v1/jobs/"+u.jobID, u.tenant.key, nil, http.StatusOK, &j); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("job %s: %w", u.jobID, err)
	}
	u.status = j.Status
	switch j.Status {
	case "completed", "failed", "cancelled":
		u.seenEnd, u.created, u.ended = time.Now(), j.CreatedAt, j.UpdatedAt
		if j.CompletedAt != nil {
			u.ended = *j.CompletedAt
		}
	}
	return nil
}

// call sends a JSON request and decodes a JSON answer of status want.
func (r *runner) call(ctx context.Context, method, path, key string, in any, want int, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.cfg.BaseURL+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.cfg.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %s: %.300s", method, path, resp.Status, b)
	}
	return json.Unmarshal(b, out)
}

// report fills the job figures of rep: the run's length by this process's
// clock, latencies and rates by the server's.
func report(rep *Report, tenants []*tenant, uploads []*upload, start time.Time) {
	type acc struct {
		docs, done     int
		lat            []time.Duration
		first, lastEnd time.Time // server clock
	}
	per := make(map[*tenant]*acc, len(tenants))
	for _, t := range tenants {
		per[t] = &acc{}
	}
	end := start
	for _, u := range uploads {
		a := per[u.tenant]
		a.docs++
		if u.jobID == "" {
			continue
		}
		switch u.status {
		case "completed":
			rep.Completed++
		case "failed", "cancelled":
			rep.Failed++
		default:
			rep.Unfinished++
			continue
		}
		if a.first.IsZero() || u.created.Before(a.first) {
			a.first = u.created
		}
		if u.status == "completed" {
			a.done++
			a.lat = append(a.lat, max(u.ended.Sub(u.created), 0))
		}
		a.lastEnd = later(a.lastEnd, u.ended)
		end = later(end, u.seenEnd)
	}
	rep.Seconds = end.Sub(start).Seconds()
	if rep.Seconds > 0 {
		rep.DocumentsPerSecond = float64(rep.Completed) / rep.Seconds
	}
	var rates []float64
	for _, t := range tenants {
		a := per[t]
		tr := TenantReport{Tenant: t.id, Flood: t.flood, Documents: a.docs, Completed: a.done, Completion: summarise(a.lat)}
		if span := a.lastEnd.Sub(a.first).Seconds(); a.done > 0 && span > 0 {
			tr.Rate = float64(a.done) / span
		}
		if !t.flood {
			rates = append(rates, tr.Rate)
		}
		rep.PerTenant = append(rep.PerTenant, tr)
	}
	rep.Fairness = jain(rates)
}

// jain is Jain's fairness index of xs: (Σx)² / (n·Σx²), 1 when all are
// equal; 0 for none.
func jain(xs []float64) float64 {
	var sum, sq float64
	for _, x := range xs {
		sum += x
		sq += x * x
	}
	if sq == 0 {
		return 0
	}
	return sum * sum / (float64(len(xs)) * sq)
}

// words make the documents: plain text the pipeline extracts, chunks and
// analyses quickly.
var words = strings.Fields(`the of and to in a is that for it as was with be by on not he this are or
his from at which but have an they you were her she there been one all we their has would when
queue tenant worker lease document report invoice contract summary analysis figure table chapter`)

// document returns size bytes of random words.
func document(rng *rand.Rand, size int) []byte {
	var b bytes.Buffer
	b.Grow(size + 16)
	for n := 0; b.Len() < size; n++ {
		if n > 0 {
			if n%14 == 0 {
				b.WriteString(".\n")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.Bytes()[:size]
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
