package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// jobEvent is one job change of GET /v1/events, as far as the tests look.
type jobEvent struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Stage   string `json:"stage"`
	Percent int    `json:"progress_percent"`
	Attempt int    `json:"attempt"`
}

// eventStream records the job events of one GET /v1/events stream.
type eventStream struct {
	mu     sync.Mutex
	events []jobEvent
	ended  chan struct{} // closed when the server ends the stream
}

// openEvents subscribes to srv's event stream with srv.key and records its
// events until the server ends it or the test does.
func openEvents(t *testing.T, srv server) *eventStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.base+"/v1/events", http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+srv.key)
	res, err := http.DefaultClient.Do(req) //nolint:bodyclose // the reader goroutine closes it
	if err != nil {
		cancel()
		t.Fatalf("GET /v1/events: %v", err)
	}
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		res.Body.Close()
		cancel()
		t.Fatalf("GET /v1/events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	s := &eventStream{ended: make(chan struct{})}
	go func() {
		defer close(s.ended)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var e jobEvent
			if json.Unmarshal([]byte(data), &e) == nil {
				s.mu.Lock()
				s.events = append(s.events, e)
				s.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-s.ended
	})
	return s
}

// of returns the events of job id so far.
func (s *eventStream) of(id string) []jobEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []jobEvent
	for _, e := range s.events {
		if e.ID == id {
			out = append(out, e)
		}
	}
	return out
}

// has reports whether job id had an event that match accepts.
func (s *eventStream) has(id string, match func(jobEvent) bool) bool {
	for _, e := range s.of(id) {
		if match(e) {
			return true
		}
	}
	return false
}

// midJob matches an event of a job at work: processing, in a named stage,
// part way.
func midJob(e jobEvent) bool {
	return e.Status == "processing" && e.Stage != "" && e.Stage != "queued" && e.Percent > 0 && e.Percent < 100
}

func completed(e jobEvent) bool { return e.Status == "completed" && e.Percent == 100 }
