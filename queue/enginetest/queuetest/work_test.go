package queuetest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/queuetest"
)

// TestWork runs one attempt per call with a real Task, and reports the
// outcome stored and the handler's error.
func TestWork(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := s.client
		boom := errors.New("smtp down")
		var calls int
		send := mailKind.Handler(func(ctx context.Context, task *queue.Task, args mailArgs) error {
			calls++
			switch args.Subject {
			case "fail":
				return boom
			case "bad address":
				return queue.Permanent(boom)
			case "later":
				return queue.Snooze(time.Hour)
			case "panic":
				panic("nil mailer")
			case "in tx":
				tx, commit, rollback, err := s.begin(ctx)
				if err != nil {
					return err
				}
				if err := task.CompleteTx(ctx, tx); err != nil {
					_ = rollback()
					return err
				}
				return commit()
			}
			if err := task.Progress(ctx, "sending", 50, "to "+args.To); err != nil {
				return err
			}
			task.SetResult(json.RawMessage(`{"sent":true}`))
			return nil
		})
		tests := []struct {
			subject string
			outcome queue.Outcome
			state   queue.State
			attempt int
			errIs   error
		}{
			{subject: "hello", outcome: queue.OutcomeCompleted, state: queue.StateCompleted, attempt: 1},
			{subject: "fail", outcome: queue.OutcomeRetry, state: queue.StateScheduled, attempt: 1, errIs: boom},
			{subject: "bad address", outcome: queue.OutcomeFailed, state: queue.StateFailed, attempt: 1, errIs: boom},
			{subject: "later", outcome: queue.OutcomeSnoozed, state: queue.StateScheduled, attempt: 0},
			{subject: "panic", outcome: queue.OutcomeRetry, state: queue.StateScheduled, attempt: 1},
			{subject: "in tx", outcome: queue.OutcomeCompleted, state: queue.StateCompleted, attempt: 1},
		}
		for i, tc := range tests {
			res := queuetest.Work(ctx, t, c, send, mailKind.Params("acme", mailArgs{To: "ann@example.com", Subject: tc.subject}))
			if calls != i+1 {
				t.Fatalf("%s: handler called %d times in all, want %d", tc.subject, calls, i+1)
			}
			if res.Outcome != tc.outcome || res.Job.State != tc.state || res.Job.Attempt != tc.attempt {
				t.Fatalf("%s: outcome %s, job %s at attempt %d; want %s, %s at attempt %d",
					tc.subject, res.Outcome, res.Job.State, res.Job.Attempt, tc.outcome, tc.state, tc.attempt)
			}
			switch {
			case tc.errIs != nil && !errors.Is(res.Err, tc.errIs):
				t.Fatalf("%s: Err %v, want %v", tc.subject, res.Err, tc.errIs)
			case tc.outcome == queue.OutcomeCompleted && res.Err != nil:
				t.Fatalf("%s: Err %v, want nil", tc.subject, res.Err)
			}
			switch tc.subject {
			case "hello":
				var r struct{ Sent bool }
				if err := json.Unmarshal(res.Job.Result, &r); err != nil || !r.Sent || res.Job.Progress != 100 {
					t.Fatalf("result %s, progress %d; want the handler's result and 100", res.Job.Result, res.Job.Progress)
				}
			case "panic":
				var pe *queue.PanicError
				if !errors.As(res.Err, &pe) || pe.Value != "nil mailer" || !strings.Contains(res.Job.ErrorMessage, "panic: nil mailer") {
					t.Fatalf("Err %v, error message %q; want a PanicError", res.Err, res.Job.ErrorMessage)
				}
			}
			attempts, err := c.Attempts(ctx, res.Job.ID)
			if err != nil || len(attempts) != 1 || attempts[0].Outcome != tc.outcome || attempts[0].WorkerID != "queuetest" {
				t.Fatalf("%s: attempts %+v, %v; want one by queuetest with outcome %s", tc.subject, attempts, err, tc.outcome)
			}
		}
	})
}

// TestWorkJob runs a job the code under test enqueued, found with
// RequireEnqueued.
func TestWorkJob(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := s.client
		signUp := func(ctx context.Context, email string) error { // the application's code under test
			_, err := mailKind.Enqueue(ctx, c, "acme", mailArgs{To: email, Subject: "welcome"})
			return err
		}
		if err := signUp(ctx, "ann@example.com"); err != nil {
			t.Fatal(err)
		}
		job := queuetest.RequireEnqueued(ctx, t, c, "mail", &queuetest.Want{Args: mailArgs{To: "ann@example.com", Subject: "welcome"}})
		var got mailArgs
		res := queuetest.WorkJob(ctx, t, c, mailKind.Handler(func(_ context.Context, _ *queue.Task, args mailArgs) error {
			got = args
			return nil
		}), job)
		if res.Job.ID != job.ID || res.Job.State != queue.StateCompleted || got.To != "ann@example.com" {
			t.Fatalf("WorkJob: job %d %s, handler got %+v", res.Job.ID, res.Job.State, got)
		}
	})
}

// TestWorkJob_NotNext fails the test, changing nothing, when a worker
// would not claim the job next.
func TestWorkJob_NotNext(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *store) {
		ctx := context.Background()
		c := s.client
		ran := false
		h := queue.HandlerFunc(func(context.Context, *queue.Task) error { ran = true; return nil })
		enqueue := func(p *queue.EnqueueParams) *queue.Job {
			res, err := c.Enqueue(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			return res.Job
		}

		// Another tenant's job waits in the same queue.
		other := enqueue(&queue.EnqueueParams{Kind: "sms", TenantID: "globex"})
		msg := failure(t, func(tb testing.TB) {
			queuetest.Work(ctx, tb, c, h, &queue.EnqueueParams{Kind: "mail", TenantID: "acme"})
		})
		if !strings.Contains(msg, `queue "default" has other pending jobs, which a worker could claim before job`) ||
			!strings.Contains(msg, `(tenant "globex"`) || !strings.Contains(msg, "give the job a queue of its own") {
			t.Fatalf("message %q", msg)
		}
		if j, err := c.Get(ctx, other.ID); err != nil || j.State != queue.StatePending || j.Attempt != 0 {
			t.Fatalf("the other job: %+v, %v; want it untouched", j, err)
		}
		// In a queue of its own, it runs.
		if res := queuetest.Work(ctx, t, c, h, &queue.EnqueueParams{Kind: "mail", TenantID: "acme", Queue: "mail"}); res.Job.State != queue.StateCompleted || !ran {
			t.Fatalf("in its own queue: %s, ran %v", res.Job.State, ran)
		}
		ran = false

		cases := []struct {
			name   string
			params *queue.EnqueueParams
			before func()
			msg    string
		}{
			{name: "scheduled", params: &queue.EnqueueParams{Kind: "mail", TenantID: "acme", Queue: "later", RunAt: time.Now().Add(time.Hour)},
				msg: "is scheduled until"},
			{name: "paused tenant", params: &queue.EnqueueParams{Kind: "mail", TenantID: "initech", Queue: "paused"},
				before: func() {
					if err := c.PauseTenant(ctx, "initech"); err != nil {
						t.Fatal(err)
					}
				}, msg: `its queue "paused" or tenant "initech" is paused`},
			{name: "duplicate", params: &queue.EnqueueParams{Kind: "mail", TenantID: "acme", Queue: "dup", UniqueKey: "k"},
				before: func() { enqueue(&queue.EnqueueParams{Kind: "mail", TenantID: "acme", Queue: "dup", UniqueKey: "k"}) },
				msg:    `the unique key "k" matched job`},
			{name: "invalid", params: &queue.EnqueueParams{Kind: "", TenantID: "acme"}, msg: `enqueue a job of kind ""`},
		}
		for _, tc := range cases {
			if tc.before != nil {
				tc.before()
			}
			if msg := failure(t, func(tb testing.TB) { queuetest.Work(ctx, tb, c, h, tc.params) }); !strings.Contains(msg, tc.msg) {
				t.Errorf("%s: message %q, want one saying %q", tc.name, msg, tc.msg)
			}
			if ran {
				t.Fatalf("%s: the handler ran", tc.name)
			}
		}
	})
}
