package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/queue/driver"
)

// listener runs a notifier's Listen until the test ends and collects what
// it delivers.
type listener struct {
	mu  sync.Mutex
	got map[string]int // "topic payload" -> count
}

func (f *fixture) listen(topics ...string) *listener {
	f.t.Helper()
	l := &listener{got: map[string]int{}}
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() {
		done <- f.d.Notifier().Listen(ctx, topics, func(topic, payload string) {
			l.mu.Lock()
			l.got[topic+" "+payload]++
			l.mu.Unlock()
		})
	}()
	f.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			f.t.Errorf("Listen returned %v", err)
		}
	})
	return l
}

func (l *listener) count(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.got[key]
}

// waitFor sends with send until l has received key, failing after a
// deadline. Sending again covers the time LISTEN takes to start.
func (f *fixture) waitFor(l *listener, key string, send func()) {
	f.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for l.count(key) == 0 {
		if time.Now().After(deadline) {
			f.t.Fatalf("no %q notification", key)
		}
		send()
		time.Sleep(20 * time.Millisecond)
	}
}

func TestNotifier_Delivers(t *testing.T) {
	verifyNoLeaks(t)
	f := setup(t)
	l := f.listen(driver.TopicInsert, driver.TopicChange)
	f.waitFor(l, "docket_insert q", func() { f.enqueue(1, "acme") })
	before := l.count("docket_insert q")
	jobs := f.claim(f.x, 1)
	f.waitFor(l, "docket_change q", func() {})
	f.finishAll(f.x, jobs)
	if n := l.count("docket_insert q"); n != before {
		t.Errorf("a claim notified %s", "docket_insert")
	}
}

// TestNotifier_Reconnects: the listening backend is terminated; the
// notifier reconnects, listens again and delivers.
func TestNotifier_Reconnects(t *testing.T) {
	verifyNoLeaks(t)
	f := setup(t)
	l := f.listen(driver.TopicInsert)
	f.waitFor(l, "docket_insert q", func() { f.enqueue(1, "acme") })
	for range 2 {
		killed := f.queryInt(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE datname = current_database() AND query LIKE 'LISTEN%'`)
		if killed != 1 {
			t.Fatalf("terminated %d listening backends, want 1", killed)
		}
		f.waitFor(l, "docket_insert other", func() {
			f.exec(`SELECT pg_notify('docket_insert', 'other')`)
		})
		l.mu.Lock()
		delete(l.got, "docket_insert other")
		l.mu.Unlock()
	}
}

func TestNotifier_InvalidTopic(t *testing.T) {
	t.Parallel()
	f := setup(t)
	err := f.d.Notifier().Listen(f.ctx, []string{"bad topic; DROP TABLE x"}, func(string, string) {})
	if err == nil {
		t.Fatal("Listen with an invalid topic: no error")
	}
}
