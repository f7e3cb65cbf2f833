package feed_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket/feed"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/postgres"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// newPGDriver returns a driver with its own pool on connString: another
// process, as far as PostgreSQL can tell.
func newPGDriver(t testing.TB, connString string) *postgres.Driver {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), connString)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return postgres.New(pool)
}

// deaf is a PostgreSQL driver that hears no notifications, so that only
// the poll can tell its feed about other processes.
type deaf struct{ *postgres.Driver }

var _ driver.Driver = deaf{}

func (deaf) Notifier() driver.Notifier { return nil }

// TestFeed_OtherProcess: a worker on another client of the same database
// (another process) does the work; its changes reach this process's feed
// through notifications alone (with a poll of an hour), or through the poll
// alone (with no notifications).
func TestFeed_OtherProcess(t *testing.T) {
	for _, hints := range []bool{true, false} {
		name := map[bool]string{true: "notifications", false: "poll"}[hints]
		t.Run(name, func(t *testing.T) {
			verifyNoLeaks(t)
			db := pgtest.NewDatabase(t)
			here, there := driver.Driver(newPGDriver(t, db)), newPGDriver(t, db)
			cfg := feed.Config{PollInterval: time.Hour}
			if !hints {
				here, cfg.PollInterval = deaf{here.(*postgres.Driver)}, 100*time.Millisecond
			}
			cfg.Client = queue.NewClient(here, queue.ClientConfig{})
			f := runFeed(t, cfg)
			other := queue.NewClient(there, queue.ClientConfig{})
			if hints {
				awaitListening(t, f, other)
			}
			sub := subscribe(t, f, "acme")
			a := enqueue(t, other, "acme", "a", 0)
			b := enqueue(t, other, "acme", "b", 0)
			expect(t, sub, "acme", at(a.ID, queue.StatePending, 0), at(b.ID, queue.StatePending, 1))

			s := newScript()
			runWorker(t, other, s)
			expect(t, sub, "acme", is(a.ID, queue.StateRunning, "downloading", 5), at(b.ID, queue.StatePending, 0))
			s.step(t, "a")
			next(t, sub, "acme", is(a.ID, queue.StateRunning, "parsing", 30))
			s.step(t, "a")
			next(t, sub, "acme", is(a.ID, queue.StateRunning, "parsing", 50))
			s.step(t, "a")
			expect(t, sub, "acme", is(a.ID, queue.StateCompleted, "", 100), is(b.ID, queue.StateRunning, "downloading", 5))
		})
	}
}

// awaitListening returns once f hears other's notifications: LISTEN starts
// in the background, and a notification sent before it is lost (the poll
// would find the change, but this test's poll is an hour).
func awaitListening(t *testing.T, f *feed.Feed, other *queue.Client) {
	t.Helper()
	sub, err := f.Subscribe(t.Context(), "warm-up")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	// Generous: under a loaded CI machine the listening connection may take
	// a few reconnection rounds to come up.
	deadline := time.Now().Add(3 * waitFor)
	for i := 0; time.Now().Before(deadline); i++ {
		enqueue(t, other, "warm-up", fmt.Sprint("w", i), 0)
		select {
		case c := <-sub.C:
			// Any change of another client's warm-up job came through a
			// notification (the poll is an hour). Matching only the job just
			// enqueued would never catch up once the first notification
			// arrived after the 200 ms wait: each round reads one event, the
			// previous job's.
			if c.Job.TenantID == "warm-up" {
				return
			}
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Fatal("the feed never heard a notification")
}
