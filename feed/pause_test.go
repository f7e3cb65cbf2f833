package feed_test

import (
	"testing"
	"time"

	"github.com/docketq/docket/feed"
	"github.com/docketq/docket/queue"
)

// TestFeed_Paused: a waiting job of a paused tenant, or of a paused queue,
// is sent again marked Paused (at the next re-read), keeping its position;
// a resume sends it unmarked. A subscriber joining while the pause holds
// sees it paused in its snapshot.
func TestFeed_Paused(t *testing.T) {
	verifyNoLeaks(t)
	client := newSQLiteClient(t)
	f := runFeed(t, feed.Config{Client: client, PollInterval: 50 * time.Millisecond})
	sub := subscribe(t, f, "acme")
	a := enqueue(t, client, "acme", "a", 0)
	next(t, sub, "acme", func(c feed.Change) bool { return at(a.ID, queue.StatePending, 0)(c) && !c.Paused })
	pausedIs := func(want bool) func(feed.Change) bool {
		return func(c feed.Change) bool { return at(a.ID, queue.StatePending, 0)(c) && c.Paused == want }
	}
	for _, tc := range []struct {
		name          string
		pause, resume func() error
	}{
		{"tenant", func() error { return client.PauseTenant(t.Context(), "acme") }, func() error { return client.ResumeTenant(t.Context(), "acme") }},
		{"queue", func() error { return client.PauseQueue(t.Context(), testQueue) }, func() error { return client.ResumeQueue(t.Context(), testQueue) }},
	} {
		if err := tc.pause(); err != nil {
			t.Fatal(err)
		}
		next(t, sub, "acme", pausedIs(true))
		late := subscribe(t, f, "acme")
		if len(late.Snapshot) != 1 || !late.Snapshot[0].Paused || late.Snapshot[0].Position != 0 {
			t.Errorf("%s paused: snapshot %+v, want job %d paused at 0", tc.name, late.Snapshot, a.ID)
		}
		late.Close()
		if err := tc.resume(); err != nil {
			t.Fatal(err)
		}
		next(t, sub, "acme", pausedIs(false))
	}
}
