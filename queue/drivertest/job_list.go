package drivertest

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

func (s *suite) testJobList(t *testing.T) {
	t.Run("Filters", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		for _, c := range []struct{ tenant, queue, kind string }{
			{"a", testQueue, "k1"}, {"b", testQueue, "k2"}, {"a", otherQueue, "k1"},
			{"a", testQueue, "k2"}, {"b", otherQueue, "k2"}, {"c", testQueue, "k1"},
		} {
			p := params(c.tenant)
			p.Queue, p.Kind = c.queue, c.kind
			f.insert(p)
		}
		f.complete(f.claimOne())
		f.claim(testQueue, 10, longLease)
		all := f.list(&queue.JobListParams{Limit: 1000})
		if len(all) != 6 {
			t.Fatalf("listed %d jobs, want 6", len(all))
		}
		if !slices.IsSortedFunc(all, func(x, y *queue.Job) int { return cmp.Compare(y.ID, x.ID) }) {
			t.Fatalf("listed ids %v, want newest first", ids(all))
		}
		mid := all[2].ID
		for _, tc := range []struct {
			name  string
			p     queue.JobListParams
			match func(*queue.Job) bool
		}{
			{"Tenant", queue.JobListParams{TenantID: "a"}, func(j *queue.Job) bool { return j.TenantID == "a" }},
			{"Queue", queue.JobListParams{Queue: otherQueue}, func(j *queue.Job) bool { return j.Queue == otherQueue }},
			{"Kind", queue.JobListParams{Kind: "k2"}, func(j *queue.Job) bool { return j.Kind == "k2" }},
			{"State", queue.JobListParams{States: []queue.State{queue.StateRunning}},
				func(j *queue.Job) bool { return j.State == queue.StateRunning }},
			{"States", queue.JobListParams{States: []queue.State{queue.StatePending, queue.StateCompleted}},
				func(j *queue.Job) bool { return j.State == queue.StatePending || j.State == queue.StateCompleted }},
			{"Combined", queue.JobListParams{TenantID: "a", Queue: testQueue, States: []queue.State{queue.StatePending}},
				func(j *queue.Job) bool {
					return j.TenantID == "a" && j.Queue == testQueue && j.State == queue.StatePending
				}},
			{"TenantRunning", queue.JobListParams{TenantID: "a", States: []queue.State{queue.StateRunning}},
				func(j *queue.Job) bool { return j.TenantID == "a" && j.State == queue.StateRunning }},
			{"TenantStates", queue.JobListParams{TenantID: "a", States: []queue.State{queue.StateRunning, queue.StateCompleted}},
				func(j *queue.Job) bool {
					return j.TenantID == "a" && (j.State == queue.StateRunning || j.State == queue.StateCompleted)
				}},
			{"TenantBeforeID", queue.JobListParams{TenantID: "a", BeforeID: mid},
				func(j *queue.Job) bool { return j.TenantID == "a" && j.ID < mid }},
			{"BeforeID", queue.JobListParams{BeforeID: mid}, func(j *queue.Job) bool { return j.ID < mid }},
			{"NoMatch", queue.JobListParams{TenantID: "nobody"}, func(*queue.Job) bool { return false }},
		} {
			want := filter(all, tc.match)
			if got := f.list(&tc.p); !slices.Equal(ids(got), ids(want)) {
				t.Fatalf("%s: listed %v, want %v", tc.name, ids(got), ids(want))
			}
		}
		if got := f.list(&queue.JobListParams{Limit: 2}); !slices.Equal(ids(got), ids(all[:2])) {
			t.Fatalf("Limit 2: listed %v, want %v", ids(got), ids(all[:2]))
		}
	})
	t.Run("Cursor", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueueN("a", 23)
		all := f.list(&queue.JobListParams{})
		var paged []*queue.Job
		var before int64
		for range 10 {
			page := f.list(&queue.JobListParams{BeforeID: before, Limit: 5})
			if len(page) == 0 {
				break
			}
			paged = append(paged, page...)
			before = page[len(page)-1].ID
		}
		if !slices.Equal(ids(paged), ids(all)) {
			t.Fatalf("pages of 5 gave %v, want %v", ids(paged), ids(all))
		}
	})
	// A tenant's running jobs and the others are read apart by PostgreSQL
	// (migration 014): pages cross from one to the other.
	t.Run("TenantCursorAcrossStates", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.tenantLimit("a", "", 10)
		f.enqueueN("a", 9)
		f.enqueueN("b", 3)
		claimed := f.claim(testQueue, 6, longLease)
		for _, j := range claimed[:2] {
			f.complete(j)
		}
		f.enqueueN("a", 4)
		all := filter(f.list(&queue.JobListParams{Limit: 1000}), func(j *queue.Job) bool { return j.TenantID == "a" })
		if n := len(filter(all, func(j *queue.Job) bool { return j.State == queue.StateRunning })); n == 0 || n == len(all) {
			t.Fatalf("%d of tenant a's %d jobs running, want some and not all", n, len(all))
		}
		var paged []*queue.Job
		var before int64
		for range 20 {
			page := f.list(&queue.JobListParams{TenantID: "a", BeforeID: before, Limit: 3})
			if len(page) == 0 {
				break
			}
			paged = append(paged, page...)
			before = page[len(page)-1].ID
		}
		if !slices.Equal(ids(paged), ids(all)) {
			t.Fatalf("pages of 3 gave %v, want %v", ids(paged), ids(all))
		}
	})
	// PostgreSQL reads a tenant's pending jobs a queue and priority at a
	// time (migration 017): pages must still be in id order across queues,
	// priorities and states, whatever the filters.
	t.Run("TenantPendingAcrossQueuesAndPriorities", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.tenantLimit("a", "", 3)
		var ps []*driver.JobInsertParams
		for i := range 24 {
			p := params([]string{"a", "a", "b"}[i%3])
			p.Priority = []int{0, 5, -3, 5}[i%4]
			p.Queue = []string{testQueue, otherQueue}[i/3%2]
			p.Kind = []string{"k1", "k2"}[i/5%2]
			if i%7 == 6 {
				p.RunAt = time.Now().Add(time.Hour)
			}
			ps = append(ps, p)
		}
		f.insert(ps...)
		claimed := f.claim(testQueue, 3, longLease)
		f.complete(claimed[0])
		tenantA := func() []*queue.Job {
			return filter(f.list(&queue.JobListParams{Limit: 1000}), func(j *queue.Job) bool { return j.TenantID == "a" })
		}
		pending := filter(tenantA(), func(j *queue.Job) bool { return j.State == queue.StatePending })
		f.cancel(&driver.JobCancelParams{ID: pending[len(pending)/2].ID})
		all := tenantA()
		for _, st := range []queue.State{queue.StatePending, queue.StateScheduled, queue.StateRunning, queue.StateCompleted, queue.StateCancelled} {
			if len(filter(all, func(j *queue.Job) bool { return j.State == st })) == 0 {
				t.Fatalf("tenant a has no %s job: %v", st, ids(all))
			}
		}
		for _, tc := range []struct {
			name  string
			p     queue.JobListParams
			match func(*queue.Job) bool
		}{
			{"All", queue.JobListParams{}, func(*queue.Job) bool { return true }},
			{"Pending", queue.JobListParams{States: []queue.State{queue.StatePending}},
				func(j *queue.Job) bool { return j.State == queue.StatePending }},
			{"PendingAndScheduled", queue.JobListParams{States: []queue.State{queue.StatePending, queue.StateScheduled}},
				func(j *queue.Job) bool { return j.State == queue.StatePending || j.State == queue.StateScheduled }},
			{"Queue", queue.JobListParams{Queue: otherQueue}, func(j *queue.Job) bool { return j.Queue == otherQueue }},
			{"Kind", queue.JobListParams{Kind: "k2"}, func(j *queue.Job) bool { return j.Kind == "k2" }},
		} {
			want := filter(all, tc.match)
			var paged []*queue.Job
			var before int64
			for range 30 {
				p := tc.p
				p.TenantID, p.BeforeID, p.Limit = "a", before, 2
				page := f.list(&p)
				if len(page) == 0 {
					break
				}
				paged = append(paged, page...)
				before = page[len(page)-1].ID
			}
			if !slices.Equal(ids(paged), ids(want)) {
				t.Fatalf("%s: pages of 2 gave %v, want %v", tc.name, ids(paged), ids(want))
			}
		}
	})
	t.Run("DefaultLimit", func(t *testing.T) {
		t.Parallel()
		f := s.setup(t)
		f.enqueueN("a", 120)
		if got := f.list(&queue.JobListParams{}); len(got) != 100 {
			t.Fatalf("Limit 0 listed %d of 120 jobs, want 100", len(got))
		}
	})
}

func (f *fixture) list(p *queue.JobListParams) []*queue.Job {
	f.t.Helper()
	jobs, err := f.x.JobList(f.ctx, p)
	if err != nil {
		f.t.Fatalf("JobList(%+v): %v", p, err)
	}
	return jobs
}

func filter(jobs []*queue.Job, keep func(*queue.Job) bool) []*queue.Job {
	var out []*queue.Job
	for _, j := range jobs {
		if keep(j) {
			out = append(out, j)
		}
	}
	return out
}
