package driver

import (
	"cmp"
	"slices"
)

// FairTenant is a tenant in a claim's fair selection (FairTake): its
// virtual time and weight, and the costs of the jobs the claim picked of
// it, in its start order (priority, then id), at most Wanted of them.
type FairTenant struct {
	VTime  float64
	Weight int
	Free   int   // free slots: its limit less its running jobs
	Wanted int   // min(Free, the claim's share)
	Costs  []int // the picked jobs' costs
}

// FairTake decides how many of each tenant's picked jobs a claim of max
// jobs takes (a prefix of each; tenants in the claim's order: least
// virtual time first), by the rule of docs/claiming.md ("Fair shares"),
// which PostgreSQL's claim.sql states in SQL: a job's start tag is its
// tenant's vtime plus the cost picked of the tenant before it over the
// weight; the jobs go in start-tag order, at most max, and none whose tag
// reaches the bound, the least of vtime + 2 x (cost picked) / weight over
// the tenants the share cut short (all Wanted picked, Wanted < Free). cut
// says whether the bound left a job out. It returns each tenant's new
// vtime too: vtime + the cost taken over the weight.
func FairTake(tenants []FairTenant, max int) (take []int, vtimes []float64, cut bool) {
	type tagged struct {
		tag    float64
		tenant int
		rn     int
	}
	var jobs []tagged
	bound, bounded := 0.0, false
	for i, t := range tenants {
		w := float64(max1(t.Weight))
		sum := 0
		for rn, c := range t.Costs {
			jobs = append(jobs, tagged{t.VTime + float64(sum)/w, i, rn})
			sum += c
		}
		if len(t.Costs) == t.Wanted && t.Wanted < t.Free && len(t.Costs) > 0 {
			b := t.VTime + 2*float64(sum)/w
			if !bounded || b < bound {
				bound, bounded = b, true
			}
		}
	}
	slices.SortFunc(jobs, func(a, b tagged) int {
		return cmp.Or(cmp.Compare(a.tag, b.tag), cmp.Compare(a.tenant, b.tenant), cmp.Compare(a.rn, b.rn))
	})
	take = make([]int, len(tenants))
	n := 0
	for _, j := range jobs {
		if bounded && j.tag >= bound {
			cut = true
			continue
		}
		if n < max {
			take[j.tenant]++
			n++
		}
	}
	vtimes = make([]float64, len(tenants))
	for i, t := range tenants {
		sum := 0
		for _, c := range t.Costs[:take[i]] {
			sum += c
		}
		vtimes[i] = t.VTime + float64(sum)/float64(max1(t.Weight))
	}
	return take, vtimes, cut
}

func max1(n int) int { return max(n, 1) }
