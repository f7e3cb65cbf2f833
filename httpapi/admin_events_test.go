package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/httpapi"
)

// adminEvent is one event of GET /v1/admin/events, or a comment.
type adminEvent struct {
	event, comment string
	health         httpapi.HealthView
}

// openAdminEvents opens GET /v1/admin/events with key; it returns the
// status and, for a 200, the events as they come (the channel closes when
// the stream ends).
func openAdminEvents(t *testing.T, base, key string) (int, <-chan adminEvent) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/admin/events", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	events := make(chan adminEvent, 100)
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	if res.StatusCode != http.StatusOK {
		_ = res.Body.Close()
		close(events)
		return res.StatusCode, events
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	wg.Go(func() {
		defer res.Body.Close()
		defer close(events)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		var ev adminEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.event != "" || ev.comment != "" {
					events <- ev
				}
				ev = adminEvent{}
			case strings.HasPrefix(line, ":"):
				ev.comment = strings.TrimSpace(line[1:])
			case strings.HasPrefix(line, "event: "):
				ev.event = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(line[len("data: "):]), &ev.health); err != nil {
					t.Errorf("data %q: %v", line, err)
				}
			}
		}
	})
	return res.StatusCode, events
}

// untilHealth returns the first health event that matches, failing after
// sseWait or when the stream ends.
func untilHealth(t *testing.T, events <-chan adminEvent, what string, match func(httpapi.HealthView) bool) httpapi.HealthView {
	t.Helper()
	deadline := time.After(sseWait)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("%s: the stream ended", what)
			}
			if ev.event == "health" && match(ev.health) {
				return ev.health
			}
		case <-deadline:
			t.Fatalf("waited %s for %s", sseWait, what)
		}
	}
}

// drainEvents takes the events already read.
func drainEvents(events <-chan adminEvent) {
	for {
		select {
		case <-events:
		default:
			return
		}
	}
}

// jobsIn returns how many jobs of the queue health are in state.
func jobsIn(h httpapi.HealthView, state string) int {
	n := 0
	for _, r := range h.QueueHealth {
		if r.State == state {
			n += r.Jobs
		}
	}
	return n
}

// TestAdminEvents_PushesChanges: the admin stream sends the queue's
// health at once and again after each change (a job enqueued, started,
// finished) without being asked, with the tenant's backlog and the
// database's health; the keep-alive is an hour, so only the changes can
// have sent them.
func TestAdminEvents_PushesChanges(t *testing.T) {
	e := newSSEEnvConfig(t, func(c *httpapi.Config) { c.AdminKey, c.KeepAlive = streamsAdminKey, time.Hour })
	acme := e.tenant("acme")
	status, events := openAdminEvents(t, e.url, streamsAdminKey)
	if status != http.StatusOK {
		t.Fatalf("GET /v1/admin/events: %d", status)
	}
	first := untilHealth(t, events, "the first snapshot", func(httpapi.HealthView) bool { return true })
	if len(first.QueueHealth) != 0 || first.Database == nil || first.Database.NotifyQueueUsage != nil {
		t.Errorf("first snapshot %+v, want no jobs and the database's health (no notify queue on SQLite)", first)
	}

	job := e.enqueue(acme.id, "one")
	h := untilHealth(t, events, "the job pending", func(h httpapi.HealthView) bool { return jobsIn(h, "pending") == 1 })
	if len(h.QueueDepth.Tenants) != 1 || h.QueueDepth.Tenants[0].TenantID != acme.id || h.QueueDepth.Tenants[0].Pending != 1 {
		t.Errorf("queue depth %+v, want acme with 1 pending", h.QueueDepth)
	}
	release := make(chan struct{})
	e.work(release)
	untilHealth(t, events, "the job running", func(h httpapi.HealthView) bool {
		return jobsIn(h, "running") == 1 && jobsIn(h, "pending") == 0
	})
	close(release)
	h = untilHealth(t, events, "the job finished", func(h httpapi.HealthView) bool { return jobsIn(h, "running") == 0 })
	// A job that comes and goes between two reads leaves the snapshot as
	// it was; the change is told all the same.
	drainEvents(events)
	quick := e.enqueue(acme.id, "quick")
	if _, err := e.queue.Cancel(t.Context(), quick.ID, acme.id); err != nil {
		t.Fatal(err)
	}
	untilHealth(t, events, "the snapshot after a job that came and went", func(h httpapi.HealthView) bool { return true })
	if len(h.QueueDepth.Tenants) != 0 || len(h.ProcessingPerformance) != 0 {
		t.Errorf("after job %d finished: depth %+v, %d performance rows; want none (the stream leaves the 24 hours out)",
			job.ID, h.QueueDepth, len(h.ProcessingPerformance))
	}
}

// TestAdminEvents_KeepAliveAndShutdown: a stream with nothing new sends
// keep-alive comments, and ends when the event source stops (the server
// shuts down).
func TestAdminEvents_KeepAliveAndShutdown(t *testing.T) {
	e := newSSEEnvConfig(t, func(c *httpapi.Config) { c.AdminKey, c.KeepAlive = streamsAdminKey, 50*time.Millisecond })
	_, events := openAdminEvents(t, e.url, streamsAdminKey)
	untilHealth(t, events, "the first snapshot", func(httpapi.HealthView) bool { return true })
	deadline := time.After(sseWait)
	for comments := 0; comments < 2; {
		select {
		case ev := <-events:
			if ev.comment == "keep-alive" {
				comments++
			}
		case <-deadline:
			t.Fatal("no keep-alive comments")
		}
	}
	e.stop()
	deadline = time.After(sseWait)
	for {
		select {
		case _, ok := <-events:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("the stream is open after the feed stopped")
		}
	}
}

// TestAdminEvents_Access: only the admin key opens the stream, at most
// MaxStreamsPerKey at once (429 beyond), and a server without an event
// source answers 503.
func TestAdminEvents_Access(t *testing.T) {
	e := newSSEEnvConfig(t, func(c *httpapi.Config) { c.AdminKey, c.MaxStreamsPerKey = streamsAdminKey, 2 })
	acme := e.tenant("acme")
	for _, tc := range []struct {
		key  string
		want int
	}{
		{acme.key, http.StatusUnauthorized},
		{"wrong", http.StatusUnauthorized},
		{streamsAdminKey, http.StatusOK},
		{streamsAdminKey, http.StatusOK},
		{streamsAdminKey, http.StatusTooManyRequests},
	} {
		if got, _ := openAdminEvents(t, e.url, tc.key); got != tc.want {
			t.Errorf("GET /v1/admin/events with %.8s…: %d, want %d", tc.key, got, tc.want)
		}
	}
	// Tenants' streams are counted apart from the admin's.
	if status, _, _ := openEvents(t, e.url, acme.key); status != http.StatusOK {
		t.Errorf("a tenant's stream beside the admin's: %d", status)
	}

	plain := newAdminEnv(t, nil) // no Events
	if got, _ := openAdminEvents(t, plain.url, testAdminKey); got != http.StatusServiceUnavailable {
		t.Errorf("without an event source: %d, want 503", got)
	}
}
