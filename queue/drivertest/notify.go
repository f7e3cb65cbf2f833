package drivertest

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

func (s *suite) testNotifier(t *testing.T) {
	t.Run("Insert", func(t *testing.T) {
		t.Parallel()
		f, n := s.listening(t)
		f.insertIn("fresh")
		n.wait(t, driver.TopicInsert, "fresh")
	})
	t.Run("RolledBack", func(t *testing.T) {
		t.Parallel()
		f, n := s.listening(t)
		tx, err := f.x.Begin(f.ctx)
		if err != nil {
			t.Fatalf("Begin: %v", err)
		}
		p := params("a")
		p.Queue = "rolled"
		insertWith(t, f.ctx, tx, p)
		if err := tx.Rollback(f.ctx); err != nil {
			t.Fatalf("Rollback: %v", err)
		}
		f.insertIn("after")
		n.wait(t, driver.TopicInsert, "after") // delivered in commit order
		if c := n.count(driver.TopicInsert, "rolled"); c != 0 {
			t.Fatalf("a rolled-back insert notified %d times", c)
		}
	})
	t.Run("OncePerTransaction", func(t *testing.T) {
		t.Parallel()
		f, n := s.listening(t)
		ps := make([]*driver.JobInsertParams, 10)
		for i := range ps {
			ps[i] = params("a")
			ps[i].Queue = "many"
		}
		f.insert(ps...)
		f.insertIn("marker")
		n.wait(t, driver.TopicInsert, "marker")
		if c := n.count(driver.TopicInsert, "many"); c != 1 {
			t.Fatalf("one insert of 10 jobs notified %d times, want once", c)
		}
	})
	t.Run("Change", func(t *testing.T) {
		t.Parallel()
		f, n := s.listening(t)
		f.insertIn("changing")
		jobs := f.claim("changing", 1, longLease)
		if len(jobs) != 1 {
			t.Fatalf("claimed %d, want 1", len(jobs))
		}
		f.progress(jobs[0].Lease(), "parsing", 10, "")
		n.wait(t, driver.TopicChange, "changing")
	})
	t.Run("CancelRunning", func(t *testing.T) {
		t.Parallel()
		f, n := s.listening(t)
		waiting := f.insertIn("cancelling")
		f.cancel(&driver.JobCancelParams{ID: waiting.ID})
		f.insertIn("cancelling")
		jobs := f.claim("cancelling", 1, longLease)
		if len(jobs) != 1 {
			t.Fatalf("claimed %d, want 1", len(jobs))
		}
		f.cancel(&driver.JobCancelParams{ID: jobs[0].ID})
		n.wait(t, driver.TopicCancel, strconv.FormatInt(jobs[0].ID, 10))
		if c := n.count(driver.TopicCancel, strconv.FormatInt(waiting.ID, 10)); c != 0 {
			t.Fatalf("cancelling a job that was not running notified %s %d times", driver.TopicCancel, c)
		}
	})
}

// insertIn inserts a pending job into queue q.
func (f *fixture) insertIn(q string) *queue.Job {
	f.t.Helper()
	p := params("a")
	p.Queue = q
	return f.insert(p)[0].Job
}

type note struct{ topic, payload string }

// notes collects what a listener received.
type notes struct {
	mu  sync.Mutex
	got []note
}

func (n *notes) add(topic, payload string) {
	n.mu.Lock()
	n.got = append(n.got, note{topic, payload})
	n.mu.Unlock()
}

func (n *notes) count(topic, payload string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 0
	for _, x := range n.got {
		if x == (note{topic, payload}) {
			c++
		}
	}
	return c
}

func (n *notes) wait(t *testing.T, topic, payload string) {
	t.Helper()
	eventually(t, "notification "+topic+" "+payload, func() bool { return n.count(topic, payload) > 0 })
}

// listening returns a fixture whose notifier listens on every topic, once
// notifications provably arrive: Listen has no readiness signal, so it
// inserts into a probe queue until one is heard.
func (s *suite) listening(t *testing.T) (*fixture, *notes) {
	t.Helper()
	f := s.setup(t)
	if !f.d.Capabilities().Notify {
		t.Skip("driver has no cross-process notifier (Capabilities.Notify is false)")
	}
	ctx, cancel := context.WithCancel(f.ctx)
	n := &notes{}
	done := make(chan error, 1)
	go func() {
		done <- f.d.Notifier().Listen(ctx, []string{driver.TopicInsert, driver.TopicChange, driver.TopicCancel}, n.add)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Listen: %v", err)
		}
	})
	deadline := time.Now().Add(waitTimeout)
	for n.count(driver.TopicInsert, "probe") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no notification of probe inserts within %v", waitTimeout)
		}
		select {
		case err := <-done:
			done <- err // for the cleanup
			t.Fatalf("Listen returned early: %v", err)
		default:
		}
		f.insertIn("probe")
		probeWait := time.Now().Add(200 * time.Millisecond)
		for n.count(driver.TopicInsert, "probe") == 0 && time.Now().Before(probeWait) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	return f, n
}
