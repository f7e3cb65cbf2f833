package dispatch_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/docketq/docket/dispatch"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/sqlite"
	"github.com/docketq/docket/webhook"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var testSecret = webhook.NewSecret()

// call is one request a receiver got.
type call struct {
	id, ts  string
	payload dispatch.Payload
	at      time.Time
}

// receiver is a loopback endpoint scripted with one answer per call (the
// last repeats); every request must carry a valid signature.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	calls  []call
	script []func(w http.ResponseWriter, r *http.Request, c call)
}

func newReceiver(t *testing.T, script ...func(w http.ResponseWriter, r *http.Request, c call)) *receiver {
	t.Helper()
	rc := &receiver{t: t, script: script}
	v, err := webhook.NewVerifier(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := v.Verify(r.Header, body); err != nil {
			t.Errorf("receiver: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		c := call{id: r.Header.Get(webhook.HeaderID), ts: r.Header.Get(webhook.HeaderTimestamp), at: time.Now()}
		if err := json.Unmarshal(body, &c.payload); err != nil {
			t.Errorf("receiver: payload: %v", err)
		}
		rc.mu.Lock()
		n := len(rc.calls)
		rc.calls = append(rc.calls, c)
		rc.mu.Unlock()
		rc.script[min(n, len(rc.script)-1)](w, r, c)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) got() []call {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]call(nil), rc.calls...)
}

func status(code int, body string, header ...string) func(http.ResponseWriter, *http.Request, call) {
	return func(w http.ResponseWriter, _ *http.Request, _ call) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

// env is a SQLite store, a client and a running worker with the
// dispatched kind "hook" sent to a receiver.
type env struct {
	driver *sqlite.Driver
	client *queue.Client
	disp   *dispatch.Dispatcher
	hooks  *hookRecorder
}

type hookRecorder struct {
	mu       sync.Mutex
	outcomes []queue.Outcome
	lost     int
}

func setup(t *testing.T, url string, timeout time.Duration, backoff queue.Backoff) *env {
	t.Helper()
	ctx := context.Background()
	d, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	c := queue.NewClient(d, queue.ClientConfig{})
	disp, err := dispatch.New(dispatch.Config{
		Client:       c,
		Endpoints:    []dispatch.Endpoint{{Kind: "hook", URL: url, Secrets: []string{testSecret}, Timeout: timeout}},
		Guard:        &dispatch.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}},
		PollInterval: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := disp.Handlers()
	hc := hs["hook"]
	hc.Backoff = backoff
	hs["hook"] = hc
	rec := &hookRecorder{}
	w, err := queue.NewWorker(c, queue.WorkerConfig{
		Handlers: hs, LeaseDuration: 2 * time.Second, HeartbeatInterval: 100 * time.Millisecond,
		PollInterval: 20 * time.Millisecond, ShutdownGrace: time.Second,
		Hooks: queue.Hooks{
			Finished: func(_ *queue.Job, o queue.Outcome, _ error) {
				rec.mu.Lock()
				defer rec.mu.Unlock()
				rec.outcomes = append(rec.outcomes, o)
			},
			LeaseLost: func(queue.Lease) { rec.mu.Lock(); rec.lost++; rec.mu.Unlock() },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(rctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return &env{driver: d, client: c, disp: disp, hooks: rec}
}

func (e *env) enqueue(t *testing.T, maxAttempts int) int64 {
	t.Helper()
	res, err := e.client.Enqueue(context.Background(), &queue.EnqueueParams{
		Kind: "hook", TenantID: "t1", Args: map[string]int{"n": 7}, MaxAttempts: maxAttempts,
	})
	if err != nil {
		t.Fatal(err)
	}
	return res.Job.ID
}

func (e *env) waitFinished(t *testing.T, id int64) *queue.Job {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		j, err := e.client.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State.Finished() {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d still %s", id, j.State)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func fixedBackoff(d time.Duration) queue.Backoff { return func(int) time.Duration { return d } }

// TestDispatch_Retries, the main case: 500, 500, 500, 200
// gives 4 attempts with the same webhook-id and increasing
// webhook-timestamp, spaced by the backoff, and the job completes with
// the endpoint's JSON result.
func TestDispatch_Retries(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, status(500, "boom"), status(500, "boom"), status(500, "boom"), status(200, `{"thumbnail":"t.png"}`))
	e := setup(t, rc.srv.URL, 5*time.Second, fixedBackoff(1050*time.Millisecond))
	id := e.enqueue(t, 4)
	j := e.waitFinished(t, id)
	if j.State != queue.StateCompleted {
		t.Fatalf("state %s (%s), want completed", j.State, j.ErrorMessage)
	}
	var res map[string]string
	if err := json.Unmarshal(j.Result, &res); err != nil || res["thumbnail"] != "t.png" {
		t.Errorf("result %s (%v)", j.Result, err)
	}
	calls := rc.got()
	if len(calls) != 4 {
		t.Fatalf("%d calls, want 4", len(calls))
	}
	for i, c := range calls {
		if c.id != dispatch.MessageID(id) {
			t.Errorf("call %d: webhook-id %q, want %q", i+1, c.id, dispatch.MessageID(id))
		}
		if c.payload.Data.Job.Attempt != i+1 || string(c.payload.Data.Job.Args) != `{"n":7}` {
			t.Errorf("call %d: job %+v", i+1, c.payload.Data.Job)
		}
		if i == 0 {
			continue
		}
		prev, _ := strconv.ParseInt(calls[i-1].ts, 10, 64)
		cur, _ := strconv.ParseInt(c.ts, 10, 64)
		if cur <= prev {
			t.Errorf("call %d: webhook-timestamp %d not after %d", i+1, cur, prev)
		}
		if gap := c.at.Sub(calls[i-1].at); gap < time.Second {
			t.Errorf("call %d came %s after the last, want the 1.05 s backoff", i+1, gap)
		}
	}
	atts, err := e.client.Attempts(context.Background(), id)
	if err != nil || len(atts) != 4 {
		t.Fatalf("attempts %d (%v), want 4", len(atts), err)
	}
}

// TestDispatch_Answers: 3xx is not followed and fails the job; 410
// fails its job only; 429 and 503 with Retry-After snooze; a request
// past the timeout is retried; other 4xx fail at once.
func TestDispatch_Answers(t *testing.T) {
	t.Parallel()
	t.Run("redirect", func(t *testing.T) {
		t.Parallel()
		var internal int
		var mu sync.Mutex
		target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { mu.Lock(); internal++; mu.Unlock() }))
		defer target.Close()
		rc := newReceiver(t, status(http.StatusFound, "", "Location", target.URL+"/internal"))
		e := setup(t, rc.srv.URL, 5*time.Second, fixedBackoff(10*time.Millisecond))
		j := e.waitFinished(t, e.enqueue(t, 3))
		mu.Lock()
		defer mu.Unlock()
		if j.State != queue.StateFailed || len(rc.got()) != 1 || internal != 0 {
			t.Errorf("state %s (%s), %d calls, %d followed; want failed, 1, 0", j.State, j.ErrorMessage, len(rc.got()), internal)
		}
	})
	t.Run("gone", func(t *testing.T) {
		t.Parallel()
		// A 410 fails its job for good; the kind's next job is sent all
		// the same (one job's answer does not disable the endpoint).
		rc := newReceiver(t, status(http.StatusGone, ""), status(200, `{"ok":true}`))
		e := setup(t, rc.srv.URL, 5*time.Second, fixedBackoff(10*time.Millisecond))
		j := e.waitFinished(t, e.enqueue(t, 3))
		if j.State != queue.StateFailed || len(rc.got()) != 1 {
			t.Fatalf("state %s after %d calls; want failed after 1", j.State, len(rc.got()))
		}
		j2 := e.waitFinished(t, e.enqueue(t, 3))
		if j2.State != queue.StateCompleted || len(rc.got()) != 2 {
			t.Errorf("second job %s (%s) after %d calls; want completed after 2", j2.State, j2.ErrorMessage, len(rc.got()))
		}
	})
	for _, tc := range []struct {
		name       string
		code       int
		retryAfter func() string
	}{
		{"429 seconds", http.StatusTooManyRequests, func() string { return "1" }},
		{"503 date", http.StatusServiceUnavailable, func() string { return time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat) }},
		{"503 zero", http.StatusServiceUnavailable, func() string { return "0" }}, // held to MinRetryAfter
	} {
		code := tc.code
		t.Run("retry-after "+tc.name, func(t *testing.T) {
			t.Parallel()
			ra := func(w http.ResponseWriter, r *http.Request, c call) {
				status(code, "", "Retry-After", tc.retryAfter())(w, r, c)
			}
			rc := newReceiver(t, ra, status(200, ""))
			e := setup(t, rc.srv.URL, 5*time.Second, fixedBackoff(10*time.Millisecond))
			id := e.enqueue(t, 1) // a snooze spends no attempt: one is enough
			j := e.waitFinished(t, id)
			calls := rc.got()
			if j.State != queue.StateCompleted || len(calls) != 2 {
				t.Fatalf("state %s (%s), %d calls; want completed after 2", j.State, j.ErrorMessage, len(calls))
			}
			if gap := calls[1].at.Sub(calls[0].at); gap < 900*time.Millisecond {
				t.Errorf("second call %s after the first, want Retry-After's (at least 1 s)", gap)
			}
		})
	}
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		slow := func(_ http.ResponseWriter, r *http.Request, _ call) { <-r.Context().Done() }
		rc := newReceiver(t, slow, status(200, `{"ok":true}`))
		e := setup(t, rc.srv.URL, 200*time.Millisecond, fixedBackoff(10*time.Millisecond))
		id := e.enqueue(t, 3)
		j := e.waitFinished(t, id)
		atts, _ := e.client.Attempts(context.Background(), id)
		// The second call answers at once, but on a loaded machine its
		// answer too can come past 200 ms: more retries are fine.
		if j.State != queue.StateCompleted || len(atts) < 2 || atts[0].Outcome != queue.OutcomeRetry {
			t.Errorf("state %s, attempts %+v; want the timed-out one retried", j.State, atts)
		}
	})
	t.Run("bad request", func(t *testing.T) {
		t.Parallel()
		rc := newReceiver(t, status(http.StatusUnprocessableEntity, "no such image"))
		e := setup(t, rc.srv.URL, 5*time.Second, fixedBackoff(10*time.Millisecond))
		j := e.waitFinished(t, e.enqueue(t, 3))
		if j.State != queue.StateFailed || len(rc.got()) != 1 {
			t.Errorf("state %s, %d calls; want failed after 1", j.State, len(rc.got()))
		}
	})
}

// TestDispatch_Async: an endpoint answers 202, reports progress and then
// completes the job with its lease token as the API does; the worker
// kept the lease meanwhile, ends without finishing the job again and
// reports no lost lease. A stale token is refused.
func TestDispatch_Async(t *testing.T) {
	t.Parallel()
	tokens := make(chan dispatch.Payload, 1)
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, c call) {
		tokens <- c.payload
		w.WriteHeader(http.StatusAccepted)
	})
	e := setup(t, rc.srv.URL, 5*time.Second, fixedBackoff(10*time.Millisecond))
	id := e.enqueue(t, 3)
	p := <-tokens
	lease, err := e.disp.CheckToken("hook", id, p.Data.Callback.Token)
	if err != nil {
		t.Fatal(err)
	}
	exec := e.driver.Executor()
	ctx := context.Background()
	// Longer than the 2 s lease: the heartbeats keep it.
	time.Sleep(2500 * time.Millisecond)
	if err := exec.JobProgress(ctx, &driver.JobProgressParams{Lease: lease, Stage: "resizing", Percent: 50}); err != nil {
		t.Fatalf("progress: %v", err)
	}
	errs, err := exec.JobFinish(ctx, []*driver.JobFinishParams{{Lease: lease, Outcome: queue.OutcomeCompleted, Result: json.RawMessage(`{"async":true}`)}})
	if err != nil || errs[0] != nil {
		t.Fatalf("finish: %v %v", err, errs)
	}
	j := e.waitFinished(t, id)
	if j.State != queue.StateCompleted || string(j.Result) != `{"async":true}` {
		t.Fatalf("job %s %s", j.State, j.Result)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		e.hooks.mu.Lock()
		outcomes, lost := append([]queue.Outcome(nil), e.hooks.outcomes...), e.hooks.lost
		e.hooks.mu.Unlock()
		if len(outcomes) == 1 {
			if outcomes[0] != queue.OutcomeCompleted || lost != 0 {
				t.Errorf("outcomes %v, lost %d; want completed, 0", outcomes, lost)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker never reported the attempt's end")
		}
		time.Sleep(10 * time.Millisecond)
	}
	atts, _ := e.client.Attempts(ctx, id)
	if len(atts) != 1 || len(rc.got()) != 1 {
		t.Errorf("%d attempts, %d calls; want 1, 1", len(atts), len(rc.got()))
	}
	errs, err = exec.JobFinish(ctx, []*driver.JobFinishParams{{Lease: lease, Outcome: queue.OutcomeFailed}})
	if err != nil || errs[0] == nil {
		t.Errorf("a second finish with the spent token: %v %v, want ErrLeaseLost", err, errs)
	}
}
