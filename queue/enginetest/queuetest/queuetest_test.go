package queuetest_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/queuetest"
)

type mailArgs struct {
	To      string `json:"to"`
	Subject string `json:"subject"`
	Retries int    `json:"retries"`
}

var mailKind = queue.Kind[mailArgs]{Name: "mail"}

func TestRequireEnqueued(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := s.client
		first, err := mailKind.Enqueue(ctx, c, "acme", mailArgs{To: "ann@example.com", Subject: "hi", Retries: 1})
		if err != nil {
			t.Fatal(err)
		}
		p := mailKind.Params("globex", mailArgs{To: "bob@example.com", Subject: "invoice"})
		p.Queue, p.UniqueKey, p.Metadata = "mail", "invoice-7", map[string]string{"request_id": "r1", "other": "x"}
		second, err := c.Enqueue(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Enqueue(ctx, &queue.EnqueueParams{Kind: "sms", TenantID: "acme"}); err != nil {
			t.Fatal(err)
		}

		pass := []struct {
			name string
			want *queuetest.Want
			id   int64
		}{
			{"kind only: the newest", nil, second.Job.ID},
			{"tenant", &queuetest.Want{TenantID: "acme"}, first.Job.ID},
			{"queue", &queuetest.Want{Queue: "mail"}, second.Job.ID},
			{"state", &queuetest.Want{States: []queue.State{queue.StatePending}, TenantID: "acme"}, first.Job.ID},
			{"args as the argument type", &queuetest.Want{Args: mailArgs{To: "ann@example.com", Subject: "hi", Retries: 1}}, first.Job.ID},
			{"args as JSON in another key order", &queuetest.Want{Args: json.RawMessage(`{"subject": "invoice", "retries": 0, "to": "bob@example.com"}`)}, second.Job.ID},
			{"unique key", &queuetest.Want{UniqueKey: "invoice-7"}, second.Job.ID},
			{"metadata subset", &queuetest.Want{Metadata: map[string]string{"request_id": "r1"}}, second.Job.ID},
		}
		for _, tc := range pass {
			if msg := failure(t, func(tb testing.TB) {
				if job := queuetest.RequireEnqueued(ctx, tb, c, "mail", tc.want); job.ID != tc.id {
					t.Errorf("%s: RequireEnqueued returned job %d, want %d", tc.name, job.ID, tc.id)
				}
			}); msg != "" {
				t.Errorf("%s: RequireEnqueued failed: %s", tc.name, msg)
			}
			if msg := failure(t, func(tb testing.TB) { queuetest.RequireNotEnqueued(ctx, tb, c, "mail", tc.want) }); !strings.Contains(msg, "want no job of kind \"mail\"") {
				t.Errorf("%s: RequireNotEnqueued: %q, want a failure", tc.name, msg)
			}
		}

		fail := []struct {
			name string
			kind string
			want *queuetest.Want
			msg  []string // what the message must say
		}{
			{"args differ", "mail", &queuetest.Want{Args: mailArgs{To: "ann@example.com", Subject: "hi"}},
				[]string{`no job of kind "mail" matching args {"to":"ann@example.com","subject":"hi","retries":0}`,
					`job ` + strconv.FormatInt(first.Job.ID, 10) + ` (tenant "acme", queue "default", pending, args {`, `"retries":1`}},
			{"metadata value differs", "mail", &queuetest.Want{Metadata: map[string]string{"request_id": "r2"}},
				[]string{`matching metadata map[request_id:r2]`, `metadata map[other:x request_id:r1]`}},
			{"no job of the kind", "fax", nil, []string{`no job of kind "fax"; no job of kind "fax" matches the other conditions either`}},
			{"state", "mail", &queuetest.Want{States: []queue.State{queue.StateCompleted}}, []string{`state in [completed]`}},
		}
		for _, tc := range fail {
			msg := failure(t, func(tb testing.TB) { queuetest.RequireEnqueued(ctx, tb, c, tc.kind, tc.want) })
			for _, m := range tc.msg {
				if !strings.Contains(msg, m) {
					t.Errorf("%s: RequireEnqueued message %q does not say %q", tc.name, msg, m)
				}
			}
			if msg := failure(t, func(tb testing.TB) { queuetest.RequireNotEnqueued(ctx, tb, c, tc.kind, tc.want) }); msg != "" {
				t.Errorf("%s: RequireNotEnqueued failed: %s", tc.name, msg)
			}
		}
	})
}

// TestRequireEnqueuedTx reads through the transaction: the job it enqueued
// is there before the commit, and nowhere after a rollback.
func TestRequireEnqueuedTx(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := s.client
		want := &queuetest.Want{TenantID: "acme", Args: mailArgs{To: "ann@example.com"}}
		for _, commitIt := range []bool{false, true} {
			tx, commit, rollback, err := s.begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := mailKind.EnqueueTx(ctx, c, tx, "acme", mailArgs{To: "ann@example.com"}); err != nil {
				t.Fatal(err)
			}
			if msg := failure(t, func(tb testing.TB) { queuetest.RequireEnqueuedTx(ctx, tb, c, tx, "mail", want) }); msg != "" {
				t.Fatalf("RequireEnqueuedTx before commit: %s", msg)
			}
			msg := failure(t, func(tb testing.TB) { queuetest.RequireNotEnqueuedTx(ctx, tb, c, tx, "mail", want) })
			if !strings.Contains(msg, `want no job of kind "mail" in the transaction matching tenant "acme"`) {
				t.Fatalf("RequireNotEnqueuedTx before commit: %q, want a failure", msg)
			}
			if msg := failure(t, func(tb testing.TB) { queuetest.RequireNotEnqueued(ctx, tb, c, "mail", want) }); msg != "" {
				t.Fatalf("RequireNotEnqueued outside the transaction before commit: %s", msg)
			}
			end := rollback
			if commitIt {
				end = commit
			}
			if err := end(); err != nil {
				t.Fatal(err)
			}
		}
		// The rolled-back job is gone, the committed one stored: one job.
		jobs, err := c.List(ctx, &queue.JobListParams{Kind: "mail"})
		if err != nil || len(jobs) != 1 {
			t.Fatalf("List = %d jobs, %v; want the committed one only", len(jobs), err)
		}
		if msg := failure(t, func(tb testing.TB) { queuetest.RequireEnqueued(ctx, tb, c, "mail", want) }); msg != "" {
			t.Fatalf("RequireEnqueued after commit: %s", msg)
		}
		// A value that is no transaction of the driver fails the test.
		msg := failure(t, func(tb testing.TB) { queuetest.RequireEnqueuedTx(ctx, tb, c, "tx", "mail", nil) })
		if !strings.Contains(msg, "list jobs of kind \"mail\"") || !strings.Contains(msg, "invalid argument") {
			t.Fatalf("RequireEnqueuedTx with a string: %q", msg)
		}
	})
}

// TestRequireEnqueued_Pages finds a job behind more than one page of
// newer jobs of its kind.
func TestRequireEnqueued_Pages(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := s.client
		old, err := mailKind.Enqueue(ctx, c, "acme", mailArgs{To: "first@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		ps := make([]*queue.EnqueueParams, 1200)
		for i := range ps {
			ps[i] = mailKind.Params("acme", mailArgs{To: "later@example.com", Retries: i})
		}
		if _, err := c.EnqueueMany(ctx, ps); err != nil {
			t.Fatal(err)
		}
		if msg := failure(t, func(tb testing.TB) {
			if job := queuetest.RequireEnqueued(ctx, tb, c, "mail", &queuetest.Want{Args: mailArgs{To: "first@example.com"}}); job.ID != old.Job.ID {
				t.Errorf("found job %d, want %d", job.ID, old.Job.ID)
			}
		}); msg != "" {
			t.Fatal(msg)
		}
	})
}
