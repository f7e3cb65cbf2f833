// Package queuetest helps the tests of applications that use the engine
// (package queue) check what their code enqueued and run a job through its
// handler, against a real store: SQLite or PostgreSQL, never a fake.
//
//   - RequireEnqueued and RequireNotEnqueued check the jobs of a kind
//     stored, RequireEnqueuedTx and RequireNotEnqueuedTx those a
//     transaction sees before it commits;
//   - Work enqueues a job and runs it once with a handler, synchronously,
//     as a worker would (a real Task: lease, progress, CompleteTx, retry
//     policy), and WorkJob does the same for a job already stored.
//
// Each helper fails the test (testing.TB's Fatalf) with a message that
// shows the jobs it found, and is safe to call from parallel tests that
// each have a store of their own. Import it from _test.go files only.
package queuetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/docketq/docket/queue"
)

// Want narrows which jobs of a kind match. The zero value (or nil) matches
// every job of the kind.
type Want struct {
	// TenantID, when set, is the job's tenant.
	TenantID string
	// Queue, when set, is the job's queue.
	Queue string
	// States, when set, lists the states the job may be in.
	States []queue.State
	// Args, when not nil, must equal the job's arguments as JSON values:
	// it is encoded as Client.Enqueue encodes EnqueueParams.Args (a
	// json.RawMessage as is) and compared regardless of key order and
	// spacing. Every field counts: a struct of the job's argument type
	// with some fields left zero matches only jobs with those fields zero.
	Args any
	// UniqueKey, when set, is the job's unique key.
	UniqueKey string
	// Metadata, when set, are pairs the job's metadata must have (it may
	// have others).
	Metadata map[string]string
}

// listFunc lists jobs through the pool or a transaction.
type listFunc func(ctx context.Context, p *queue.JobListParams) ([]*queue.Job, error)

// maxScanned bounds how many jobs of a kind a helper reads.
const maxScanned = 10000

// RequireEnqueued fails the test unless a job of kind matching want is
// stored, and returns the newest such job.
func RequireEnqueued(ctx context.Context, tb testing.TB, client *queue.Client, kind string, want *Want) *queue.Job {
	tb.Helper()
	return requireEnqueued(ctx, tb, client.List, "", kind, want)
}

// RequireEnqueuedTx fails the test unless a job of kind matching want is
// seen by tx (pgx.Tx for PostgreSQL, *sql.Tx for SQLite), the jobs it
// enqueued itself before committing included, and returns the newest such
// job. Reading through the transaction checks what the code under test
// enqueues without committing it.
func RequireEnqueuedTx(ctx context.Context, tb testing.TB, client *queue.Client, tx any, kind string, want *Want) *queue.Job {
	tb.Helper()
	return requireEnqueued(ctx, tb, txLister(client, tx), " in the transaction", kind, want)
}

// RequireNotEnqueued fails the test if a job of kind matching want is
// stored.
func RequireNotEnqueued(ctx context.Context, tb testing.TB, client *queue.Client, kind string, want *Want) {
	tb.Helper()
	requireNotEnqueued(ctx, tb, client.List, "", kind, want)
}

// RequireNotEnqueuedTx fails the test if tx sees a job of kind matching
// want.
func RequireNotEnqueuedTx(ctx context.Context, tb testing.TB, client *queue.Client, tx any, kind string, want *Want) {
	tb.Helper()
	requireNotEnqueued(ctx, tb, txLister(client, tx), " in the transaction", kind, want)
}

func txLister(client *queue.Client, tx any) listFunc {
	return func(ctx context.Context, p *queue.JobListParams) ([]*queue.Job, error) {
		return client.ListTx(ctx, tx, p)
	}
}

func requireEnqueued(ctx context.Context, tb testing.TB, list listFunc, where, kind string, want *Want) *queue.Job {
	tb.Helper()
	m := newMatcher(tb, want)
	matched, others := scan(ctx, tb, list, kind, m, 1)
	if len(matched) == 0 {
		tb.Fatalf("queuetest: no job of kind %q%s%s; %s", kind, where, m.describe(), describeJobs(kind, others))
		return nil
	}
	return matched[0]
}

func requireNotEnqueued(ctx context.Context, tb testing.TB, list listFunc, where, kind string, want *Want) {
	tb.Helper()
	m := newMatcher(tb, want)
	if matched, _ := scan(ctx, tb, list, kind, m, 1); len(matched) > 0 {
		tb.Fatalf("queuetest: want no job of kind %q%s%s, found %s", kind, where, m.describe(), describeJob(matched[0]))
	}
}

// scan reads the jobs of kind, newest first, and returns up to limit that
// match and up to 5 of the others (for the failure message).
func scan(ctx context.Context, tb testing.TB, list listFunc, kind string, m *matcher, limit int) (matched, others []*queue.Job) {
	tb.Helper()
	p := &queue.JobListParams{Kind: kind, TenantID: m.want.TenantID, Queue: m.want.Queue, States: m.want.States, Limit: 500}
	for read := 0; read < maxScanned; {
		jobs, err := list(ctx, p)
		if err != nil {
			tb.Fatalf("queuetest: list jobs of kind %q: %v", kind, err)
			return nil, nil
		}
		for _, j := range jobs {
			switch {
			case m.match(j):
				matched = append(matched, j)
				if len(matched) == limit {
					return matched, others
				}
			case len(others) < 5:
				others = append(others, j)
			}
		}
		read += len(jobs)
		if len(jobs) < p.Limit {
			return matched, others
		}
		p.BeforeID = jobs[len(jobs)-1].ID
	}
	tb.Fatalf("queuetest: more than %d jobs of kind %q; narrow the search (Want.TenantID, Queue, States)", maxScanned, kind)
	return nil, nil
}

// matcher holds a Want with its Args decoded once.
type matcher struct {
	want    Want
	args    any  // Want.Args as a JSON value
	hasArgs bool // Want.Args was set
	argsRaw []byte
}

func newMatcher(tb testing.TB, want *Want) *matcher {
	tb.Helper()
	m := &matcher{}
	if want != nil {
		m.want = *want
	}
	if m.want.Args != nil {
		raw, ok := m.want.Args.(json.RawMessage)
		if !ok {
			var err error
			if raw, err = json.Marshal(m.want.Args); err != nil {
				tb.Fatalf("queuetest: encode Want.Args: %v", err)
				return m
			}
		}
		v, err := jsonValue(raw)
		if err != nil {
			tb.Fatalf("queuetest: Want.Args is not valid JSON: %v", err)
			return m
		}
		m.args, m.hasArgs, m.argsRaw = v, true, raw
	}
	return m
}

func (m *matcher) match(j *queue.Job) bool {
	if m.want.UniqueKey != "" && j.UniqueKey != m.want.UniqueKey {
		return false
	}
	for k, v := range m.want.Metadata {
		if got, ok := j.Metadata[k]; !ok || got != v {
			return false
		}
	}
	if !m.hasArgs {
		return true
	}
	got, err := jsonValue(j.Args)
	return err == nil && reflect.DeepEqual(got, m.args)
}

// describe names the conditions, for messages: ` matching tenant "acme",
// args {"to":"x"}`.
func (m *matcher) describe() string {
	var parts []string
	w := m.want
	if w.TenantID != "" {
		parts = append(parts, fmt.Sprintf("tenant %q", w.TenantID))
	}
	if w.Queue != "" {
		parts = append(parts, fmt.Sprintf("queue %q", w.Queue))
	}
	if len(w.States) > 0 {
		parts = append(parts, fmt.Sprintf("state in %v", w.States))
	}
	if w.UniqueKey != "" {
		parts = append(parts, fmt.Sprintf("unique key %q", w.UniqueKey))
	}
	if len(w.Metadata) > 0 {
		parts = append(parts, fmt.Sprintf("metadata %v", w.Metadata))
	}
	if m.hasArgs {
		parts = append(parts, "args "+compact(m.argsRaw))
	}
	if len(parts) == 0 {
		return ""
	}
	return " matching " + strings.Join(parts, ", ")
}

func describeJobs(kind string, jobs []*queue.Job) string {
	if len(jobs) == 0 {
		return fmt.Sprintf("no job of kind %q matches the other conditions either", kind)
	}
	s := make([]string, len(jobs))
	for i, j := range jobs {
		s[i] = describeJob(j)
	}
	return fmt.Sprintf("jobs of kind %q that do not match (newest first): %s", kind, strings.Join(s, "; "))
}

func describeJob(j *queue.Job) string {
	s := fmt.Sprintf("job %d (tenant %q, queue %q, %s, args %s", j.ID, j.TenantID, j.Queue, j.State, compact(j.Args))
	if j.UniqueKey != "" {
		s += fmt.Sprintf(", unique key %q", j.UniqueKey)
	}
	if len(j.Metadata) > 0 {
		s += fmt.Sprintf(", metadata %v", j.Metadata)
	}
	return s + ")"
}

// jsonValue decodes raw into a value that reflect.DeepEqual compares as
// JSON: objects regardless of key order, numbers by value (jsonb may
// print 1.0 for 1).
func jsonValue(raw []byte) (any, error) {
	var v any
	err := json.Unmarshal(raw, &v)
	return v, err
}

// compact prints JSON on one line, at most 200 bytes.
func compact(raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		b.Reset()
		b.Write(raw)
	}
	s := b.String()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
