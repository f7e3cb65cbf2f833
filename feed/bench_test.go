package feed_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/docketq/docket/feed"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// BenchmarkEventLatency measures the time from a handler's progress report
// (the store write included) to its arrival at a subscriber: in process on
// SQLite and PostgreSQL (the bus), and from another process on PostgreSQL
// (a notification, then a debounced re-read). It reports p50 and p99.
func BenchmarkEventLatency(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		c := newSQLiteClient(b)
		benchLatency(b, c, c, 0)
	})
	b.Run("postgres", func(b *testing.B) {
		c := queue.NewClient(newPGDriver(b, pgtest.NewDatabase(b)), queue.ClientConfig{})
		benchLatency(b, c, c, 0)
	})
	b.Run("postgres-other-process", func(b *testing.B) {
		db := pgtest.NewDatabase(b)
		here := queue.NewClient(newPGDriver(b, db), queue.ClientConfig{})
		there := queue.NewClient(newPGDriver(b, db), queue.ClientConfig{})
		benchLatency(b, here, there, feed.DefaultDebounce)
	})
}

// benchLatency runs one job on worker's client whose handler reports a new
// stage each time the benchmark asks, and times its arrival at a
// subscriber of a feed on watcher.
func benchLatency(b *testing.B, watcher, worker *queue.Client, debounce time.Duration) {
	f := runFeed(b, feed.Config{Client: watcher, Debounce: debounce, PollInterval: time.Minute})
	sub := subscribe(b, f, "acme")
	report := make(chan int)
	h := queue.HandlerFunc(func(ctx context.Context, t *queue.Task) error {
		for {
			select {
			case i := <-report:
				if err := t.Progress(ctx, fmt.Sprint("s", i), i%100, ""); err != nil {
					return err
				}
			case <-ctx.Done():
				return nil
			}
		}
	})
	runWorker(b, worker, h)
	job := enqueue(b, worker, "acme", "bench", 0)
	await(b, sub, func(c feed.Change) bool { return c.Job.ID == job.ID && c.Job.State == queue.StateRunning })
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		report <- i
		stage := fmt.Sprint("s", i)
		await(b, sub, func(c feed.Change) bool { return c.Job.ID == job.ID && c.Job.Stage == stage })
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

func await(b *testing.B, sub *feed.Subscription, match func(feed.Change) bool) {
	b.Helper()
	deadline := time.After(waitFor)
	for {
		select {
		case c, ok := <-sub.C:
			if !ok {
				b.Fatal("subscription closed")
			}
			if match(c) {
				return
			}
		case <-deadline:
			b.Fatal("no change")
		}
	}
}
