package drivertest

import (
	"cmp"
	"slices"
	"testing"

	"github.com/docketq/docket/queue"
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
