package feed

import (
	"slices"

	"github.com/docketq/docket/queue"
)

// aheadBase counts the waiting jobs a capped read did not list, all older
// (smaller ids) than every listed one. Zero when the read listed them all.
type aheadBase struct {
	// byPriority: for a priority of the listed pending jobs, how many
	// unlisted pending jobs have that priority or a higher one.
	byPriority map[int]int
	all        int // unlisted pending jobs
}

// ahead returns how many unlisted pending jobs start before a listed one of
// priority p. For a priority not anchored it takes the nearest anchored
// priority above (a lower bound), until the next read anchors it.
func (b aheadBase) ahead(p int) int {
	if n, ok := b.byPriority[p]; ok {
		return n
	}
	best, bestPrio, found := 0, 0, false
	for q, n := range b.byPriority {
		if q > p && (!found || q < bestPrio) {
			best, bestPrio, found = n, q, true
		}
	}
	return best
}

// sortPending orders pending jobs as they will start: priority first
// (highest), then id.
func sortPending(jobs []*queue.Job) {
	slices.SortFunc(jobs, func(a, b *queue.Job) int {
		if a.Priority != b.Priority {
			return b.Priority - a.Priority
		}
		return cmpInt64(a.ID, b.ID)
	})
}

// positions returns the queue position of every pending and scheduled job
// among jobs (a tenant's active jobs): for a pending job the pending jobs
// ahead of it, for a scheduled job every pending job (as
// queue.Client.Position counts them).
func positions(jobs []*queue.Job, base aheadBase) map[int64]int {
	var pending []*queue.Job
	for _, j := range jobs {
		if j.State == queue.StatePending {
			pending = append(pending, j)
		}
	}
	sortPending(pending)
	pos := make(map[int64]int, len(jobs))
	for i, j := range pending {
		pos[j.ID] = base.ahead(j.Priority) + i
	}
	for _, j := range jobs {
		if j.State == queue.StateScheduled {
			pos[j.ID] = len(pending) + base.all
		}
	}
	return pos
}
