package chaos

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"time"
)

// This file holds the churn soak's measurements and its pass criteria
// (docs/reliability.md, Churn soak), apart from the run itself (soak_test.go,
// -tags soak), so that the criteria are unit-tested in every go test.

// soakSample is one row of the soak's time series, taken every sampling
// interval from a connection of its own.
type soakSample struct {
	At time.Duration // since the load began

	Enqueued, Completed int64 // acknowledged enqueues, completions stored (cumulative)
	Cleaned             int64 // jobs deleted by the retention cleaner (cumulative)

	HeapBytes     int64 // pg_relation_size('docket_jobs')
	IndexBytes    int64 // pg_indexes_size('docket_jobs')
	TotalBytes    int64 // pg_total_relation_size('docket_jobs'): heap, indexes, TOAST, maps
	FetchBytes    int64 // pg_relation_size of the fetch (claim) index, docket_jobs_fetch
	AttemptsBytes int64 // pg_total_relation_size('docket_job_attempts')

	LiveTup, DeadTup  int64     // pg_stat_user_tables.n_live_tup, n_dead_tup
	Autovacuums       int64     // autovacuum_count
	Autoanalyzes      int64     // autoanalyze_count
	LastAutovacuum    time.Time // last_autovacuum; zero: never
	LastAutovacuumRel float64   // last_autovacuum in seconds since the load began; NaN: never

	Claims      int           // claims that returned in the window
	ClaimErrors int           // of which failed
	ClaimP50    time.Duration // over the window's claims
	ClaimP99    time.Duration
	ClaimMax    time.Duration
	Throughput  float64 // completions per second over the window
	Load1       float64 // the machine's 1-minute load average; NaN: not read
}

// claimRec is one claim as the engine made it (driver.Executor.JobClaim).
type claimRec struct {
	end, dur time.Duration // end: since the load began
	jobs     int
	failed   bool
}

// claimRecorder keeps every claim of the run in the order they returned.
type claimRecorder struct {
	mu    sync.Mutex
	start time.Time
	recs  []claimRec
	errs  []string // the first failures' messages
}

func newClaimRecorder(start time.Time) *claimRecorder { return &claimRecorder{start: start} }

// add records a claim that began at begin.
func (r *claimRecorder) add(begin time.Time, jobs int, err error) {
	end := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, claimRec{end: end.Sub(r.start), dur: end.Sub(begin), jobs: jobs, failed: err != nil})
	if err != nil && len(r.errs) < 20 {
		r.errs = append(r.errs, fmt.Sprintf("+%s: %v", end.Sub(r.start).Round(time.Millisecond), err))
	}
}

// window returns the durations of the claims that returned in [from, to)
// and how many of them failed.
func (r *claimRecorder) window(from, to time.Duration) ([]time.Duration, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// recs are appended under the lock at their end, so they are sorted by end.
	i := sort.Search(len(r.recs), func(k int) bool { return r.recs[k].end >= from })
	var durs []time.Duration
	failed := 0
	for ; i < len(r.recs) && r.recs[i].end < to; i++ {
		durs = append(durs, r.recs[i].dur)
		if r.recs[i].failed {
			failed++
		}
	}
	return durs, failed
}

// failures returns the first failures' messages.
func (r *claimRecorder) failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

// percentile returns the nearest-rank q-quantile of ds (0 when empty).
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	k := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(k, 0), len(s)-1)]
}

// soakWindows are the windows of the soak's pass criteria. A run of at least
// soakFullRun (15 minutes: the last 5 minutes then start at or after
// minute 10) uses them as written (the size at minute 10, the claim p99 of
// minutes 5–10, the last 5 minutes); a shorter run (a quick check of the
// code) scales them by its length over soakFullRun. The autovacuum
// cadence (once per 2 minutes) is never scaled: the server's naptime is
// not.
type soakWindows struct {
	Scale              float64
	Ref                time.Duration // the size reference: minute 10
	BaseFrom, BaseTo   time.Duration // the claim p99 baseline: minutes 5–10
	LastFrom, End      time.Duration // the last 5 minutes of the load
	AutovacuumMaxGap   time.Duration // 2 minutes
	SizeFactor, P99Max float64       // 1.2 and 2
}

// soakFullRun is the length of run from which the criteria's windows apply as
// written.
const soakFullRun = 15 * time.Minute

func soakWindowsFor(end time.Duration) soakWindows {
	s := min(1, float64(end)/float64(soakFullRun))
	scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) * s) }
	return soakWindows{Scale: s, Ref: scale(10 * time.Minute), BaseFrom: scale(5 * time.Minute),
		BaseTo: scale(10 * time.Minute), LastFrom: end - scale(5*time.Minute), End: end,
		AutovacuumMaxGap: 2 * time.Minute, SizeFactor: 1.2, P99Max: 2}
}

// soakCriterion is one pass criterion of the soak with what was measured.
type soakCriterion struct {
	Name   string
	Pass   bool
	Detail string
}

// reindexResult is what the REINDEX CONCURRENTLY of the fetch index did.
type reindexResult struct {
	Ran            bool
	From, To       time.Duration // since the load began
	Err            error
	Valid          bool // the fetch index is valid afterwards, with no leftover _ccnew
	ClaimsDuring   int
	FailuresDuring int
}

// evalSoak checks the soak's four pass criteria on the samples and claims.
func evalSoak(samples []soakSample, claims *claimRecorder, w soakWindows, rx reindexResult) []soakCriterion {
	return []soakCriterion{
		evalSize(samples, w), evalClaimP99(claims, w), evalAutovacuum(samples, w), evalReindex(rx),
	}
}

func evalSize(samples []soakSample, w soakWindows) soakCriterion {
	c := soakCriterion{Name: "size plateau"}
	ref := nearestSample(samples, w.Ref)
	if ref == nil {
		c.Detail = "no samples"
		return c
	}
	var last *soakSample
	for i := range samples {
		if s := &samples[i]; s.At >= w.LastFrom && s.At <= w.End && (last == nil || s.TotalBytes > last.TotalBytes) {
			last = s
		}
	}
	if last == nil {
		c.Detail = "no sample in the last window"
		return c
	}
	ratio := float64(last.TotalBytes) / float64(max(ref.TotalBytes, 1))
	c.Pass = ratio <= w.SizeFactor
	c.Detail = fmt.Sprintf("table+indexes %s at %s; largest in the last window (from %s) %s at %s: %.2f× (bound %.1f×)",
		mb(ref.TotalBytes), fmtMin(ref.At), fmtMin(w.LastFrom), mb(last.TotalBytes), fmtMin(last.At), ratio, w.SizeFactor)
	return c
}

func evalClaimP99(claims *claimRecorder, w soakWindows) soakCriterion {
	c := soakCriterion{Name: "claim p99 stable"}
	base, _ := claims.window(w.BaseFrom, w.BaseTo)
	last, _ := claims.window(w.LastFrom, w.End)
	if len(base) == 0 || len(last) == 0 {
		c.Detail = fmt.Sprintf("claims: %d in the baseline, %d in the last window", len(base), len(last))
		return c
	}
	pb, pl := percentile(base, 0.99), percentile(last, 0.99)
	ratio := float64(pl) / float64(max(pb, time.Microsecond))
	c.Pass = ratio <= w.P99Max
	c.Detail = fmt.Sprintf("p99 %s over %s–%s (%d claims), %s over the last window %s–%s (%d claims): %.2f× (bound %.0f×)",
		ms(pb), fmtMin(w.BaseFrom), fmtMin(w.BaseTo), len(base), ms(pl), fmtMin(w.LastFrom), fmtMin(w.End), len(last), ratio, w.P99Max)
	return c
}

// autovacuumGaps returns the completions of autovacuum on the jobs table
// seen in the samples (seconds since the load began) and the longest time
// without one in [0, end]: before the first, between two, after the last.
func autovacuumGaps(samples []soakSample, end time.Duration) ([]float64, time.Duration) {
	var done []float64
	var prev int64
	for _, s := range samples {
		if s.Autovacuums > prev && !math.IsNaN(s.LastAutovacuumRel) && s.LastAutovacuumRel >= 0 {
			done = append(done, s.LastAutovacuumRel)
		}
		prev = max(prev, s.Autovacuums)
	}
	gap, last := 0.0, 0.0
	for _, d := range done {
		gap, last = max(gap, d-last), d
	}
	gap = max(gap, end.Seconds()-last)
	return done, time.Duration(gap * float64(time.Second))
}

func evalAutovacuum(samples []soakSample, w soakWindows) soakCriterion {
	c := soakCriterion{Name: "autovacuum cadence"}
	done, gap := autovacuumGaps(samples, w.End)
	drops := 0
	for i := 1; i < len(samples); i++ {
		if samples[i].DeadTup < samples[i-1].DeadTup {
			drops++
		}
	}
	c.Pass = gap <= w.AutovacuumMaxGap
	c.Detail = fmt.Sprintf("%d autovacuums of docket_jobs seen in %s, longest time without one %s (bound %s); n_dead_tup fell in %d of %d intervals",
		len(done), fmtMin(w.End), gap.Round(time.Second), w.AutovacuumMaxGap, drops, max(len(samples)-1, 0))
	return c
}

func evalReindex(rx reindexResult) soakCriterion {
	c := soakCriterion{Name: "REINDEX CONCURRENTLY under load"}
	switch {
	case !rx.Ran:
		c.Detail = "did not run"
	case rx.Err != nil:
		c.Detail = fmt.Sprintf("REINDEX failed: %v", rx.Err)
	default:
		c.Pass = rx.FailuresDuring == 0 && rx.Valid
		c.Detail = fmt.Sprintf("from %s to %s (%.1fs): %d claims, %d failed; index valid afterwards: %v",
			fmtMin(rx.From), fmtMin(rx.To), (rx.To - rx.From).Seconds(), rx.ClaimsDuring, rx.FailuresDuring, rx.Valid)
	}
	return c
}

// nearestSample returns the sample taken closest to at.
func nearestSample(samples []soakSample, at time.Duration) *soakSample {
	var best *soakSample
	for i := range samples {
		if best == nil || absDur(samples[i].At-at) < absDur(best.At-at) {
			best = &samples[i]
		}
	}
	return best
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func mb(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/(1<<20)) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// fmtMin renders a time since the load began as m:ss.
func fmtMin(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}
