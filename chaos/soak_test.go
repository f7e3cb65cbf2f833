//go:build soak

package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketq/docket/queue/postgres/pgtest"
)

// soakStall fails the soak when no job completes for this long after the
// producer is done.
const soakStall = 5 * time.Minute

// TestSoak is the churn soak (docs/reliability.md): SOAK_JOBS
// jobs (make soak: 1,000,000) through the queue on a PostgreSQL cluster of
// its own with the server's default autovacuum settings and the jobs
// table's own (migration 001: scale factors 0.02), while the engine's
// retention cleaner deletes completed jobs older than SOAK_RETENTION
// (default 1 minute) every clean interval (the engine's default, 1
// minute; a run expected to take under 5 minutes, the quick check, keeps
// 5 s and cleans every 5 s so that the cleaner works within it).
// SOAK_WORKERS in-process workers (each with its own pool, as a
// process would have) run no-op handlers for SOAK_TENANTS tenants; a
// producer enqueues at up to SOAK_RATE jobs/s, holding back while more
// than SOAK_BACKLOG jobs are unfinished. Every claim is timed as the
// engine makes it (driver.Executor.JobClaim, wrapped). Every SOAK_SAMPLE a
// sampler reads the jobs table's sizes, its live and dead tuples and its
// autovacuum count; when SOAK_REINDEX_AT of the jobs are enqueued the
// fetch index is rebuilt with REINDEX CONCURRENTLY.
//
// Pass: table+index size in the last 5 minutes at most 1.2× its size
// at minute 10; claim p99 of the last 5 minutes at most 2× that of minutes
// 5–10; autovacuum completes on the jobs table at least once every 2
// minutes; no claim fails during the REINDEX. A run shorter than 15
// minutes scales the first two windows by its length over 15 minutes. The
// oracle: the in-memory ledger of every handler start and every stored
// completion (nothing lost, nothing unexpected, one execution per job),
// the jobs left in the table plus those the cleaner deleted equal the
// enqueues, and one job in SOAK_EFFECT_EVERY stores an effect row in its
// completing transaction (exactly one each).
//
// Outputs in SOAK_OUT (default a new temporary directory): soak.csv,
// size.svg, dead.svg, claim.svg, throughput.svg and summary.md.
func TestSoak(t *testing.T) {
	c := soakConfigFromEnv(t)
	cl := startCluster(t, pgtest.Options{MaxConnections: 100})
	e := setupOn(t, cl)
	ctx := context.Background()
	out := c.out
	if out == "" {
		var err error
		if out, err = os.MkdirTemp("", "docket-soak-"); err != nil {
			t.Fatal(err)
		}
	}
	logPath := filepath.Join(t.TempDir(), "workers.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	logger := slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelWarn}))
	t.Logf("soak: %d jobs at up to %d/s, %d workers × %d slots, %d tenants, retention %s, clean interval %s, sample every %s, backlog cap %d; outputs in %s",
		c.jobs, c.rate, c.workers, c.slots, c.tenants, c.retention, orDefault(c.cleanInterval, "engine default (1m)"), c.sample, c.backlog, out)

	l := newSoakLedger(c.jobs)
	start := time.Now()
	startDB := e.dbNow()
	rec := newClaimRecorder(start)
	ws := startSoakWorkers(t, e.connString, c, rec, l, logger)
	wctx, stopWorkers := context.WithCancel(ctx)
	defer stopWorkers()
	var running sync.WaitGroup
	runErrs := make([]error, len(ws))
	for i, w := range ws {
		running.Go(func() { runErrs[i] = w.worker.Run(wctx) })
	}

	pctx, stopProducer := context.WithCancel(ctx)
	defer stopProducer()
	var enqueueErrs []error
	produced := make(chan struct{})
	go func() { defer close(produced); enqueueErrs = produce(pctx, e.client, c, l) }()
	reindexed := make(chan reindexResult, 1)
	go func() {
		for l.enqueued() < int64(c.reindexAt*float64(c.jobs)) {
			select {
			case <-pctx.Done():
				reindexed <- reindexResult{}
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
		reindexed <- reindexFetch(pctx, e.pool, start, rec)
	}()

	samples, end := sampleSoak(t, c, &soakSampler{pool: e.pool, start: start, startDB: startDB, claims: rec, ledger: l}, produced)
	stopProducer()
	<-produced
	rx := <-reindexed
	stopWorkers()
	running.Wait()
	for i, err := range runErrs {
		if err != nil {
			t.Errorf("worker %d: %v", i, err)
		}
	}
	for _, err := range enqueueErrs {
		t.Errorf("enqueue (no fault injected): %v", err)
	}

	w := soakWindowsFor(end)
	crit := evalSoak(samples, rec, w, rx)
	v := l.check()
	meta := soakRunMeta{Title: fmt.Sprintf("churn soak, %d jobs", c.jobs), Windows: w, ReindexRan: rx.Ran,
		ReindexFromS: rx.From.Seconds(), ReindexToS: rx.To.Seconds(), LoadStartDB: startDB}
	paths, err := writeSoakOutputs(out, samples, meta)
	if err != nil {
		t.Fatalf("write outputs: %v", err)
	}
	summary := soakSummary(c, samples, w, crit, v, rx, rec, end)
	if err := os.WriteFile(filepath.Join(out, "summary.md"), []byte(summary), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("outputs: %s, %s", strings.Join(paths, ", "), filepath.Join(out, "summary.md"))
	t.Log("\n" + summary)
	if w.Scale < 1 {
		t.Logf("run of %s, shorter than %s: the size and p99 windows are scaled by %.3f (a check of the code, not the criteria's figures)",
			end.Round(time.Second), soakFullRun, w.Scale)
	}

	for _, cr := range crit {
		if !cr.Pass {
			t.Errorf("soak %s: FAIL: %s", cr.Name, cr.Detail)
		}
	}
	checkSoakLedger(t, e, c, l, v)
	if fs := rec.failures(); len(fs) > 0 {
		t.Errorf("failed claims (first %d): %s", len(fs), strings.Join(fs, "; "))
	}
	if st, _ := logFile.Stat(); st != nil && st.Size() > 0 {
		b, _ := os.ReadFile(logPath)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		t.Logf("workers logged %d warnings or errors; the last: %s", len(lines), strings.Join(lines[max(0, len(lines)-5):], "\n"))
	}
}

// TestSoakReplot redraws the charts of the run in SOAK_REPLOT (a
// directory with its soak.csv and run.json) with this code; without
// SOAK_REPLOT it skips.
func TestSoakReplot(t *testing.T) {
	dir := os.Getenv("SOAK_REPLOT")
	if dir == "" {
		t.Skip("SOAK_REPLOT names no run directory")
	}
	paths, err := replotSoak(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("redrawn: %s", strings.Join(paths, ", "))
}

// sampleSoak samples every c.sample until every job is completed, and
// returns the samples and when the last completion was seen.
func sampleSoak(t *testing.T, c soakConfig, s *soakSampler, produced <-chan struct{}) ([]soakSample, time.Duration) {
	t.Helper()
	ctx := context.Background()
	var samples []soakSample
	tick := time.NewTicker(c.sample)
	defer tick.Stop()
	var lastLog time.Duration
	lastProgress, lastCompleted := time.Now(), int64(0)
	for {
		select {
		case <-tick.C:
		case <-produced:
			produced = nil // the producer is done; keep sampling
			continue
		}
		x, err := s.take(ctx)
		if err != nil {
			t.Logf("sample at %s failed (kept going): %v", fmtMin(x.At), err)
			continue
		}
		samples = append(samples, x)
		if x.Completed > lastCompleted {
			lastProgress, lastCompleted = time.Now(), x.Completed
		}
		if x.At-lastLog >= time.Minute || x.Completed >= int64(c.jobs) {
			lastLog = x.At
			t.Logf("+%s enqueued %d completed %d cleaned %d (%.0f jobs/s) docket_jobs %s (heap %s, indexes %s, fetch %s) live %d dead %d autovacuums %d; claims %d p50 %s p99 %s",
				fmtMin(x.At), x.Enqueued, x.Completed, x.Cleaned, x.Throughput, mb(x.TotalBytes), mb(x.HeapBytes), mb(x.IndexBytes),
				mb(x.FetchBytes), x.LiveTup, x.DeadTup, x.Autovacuums, x.Claims, ms(x.ClaimP50), ms(x.ClaimP99))
		}
		if x.Completed >= int64(c.jobs) {
			return samples, x.At
		}
		if produced == nil && time.Since(lastProgress) > soakStall {
			t.Errorf("no job completed for %s after the producer was done: %d of %d completed", soakStall, x.Completed, c.jobs)
			return samples, x.At
		}
	}
}

// checkSoakLedger runs the oracle: the in-memory ledger, the table's
// remaining jobs against the enqueues and the sampled effect rows.
func checkSoakLedger(t *testing.T, e *env, c soakConfig, l *soakLedger, v soakVerdict) {
	t.Helper()
	if v.Acked != c.jobs || v.Lost != 0 || v.Unexpected != 0 || v.Duplicates != 0 || v.DoubleDone != 0 || len(v.Other) != 0 {
		t.Errorf("ledger: %+v, want %d acknowledged, none lost, unexpected or duplicated, every outcome completed", v, c.jobs)
	}
	states := map[string]int{}
	rows, err := e.pool.Query(context.Background(), `SELECT state, count(*) FROM docket_jobs GROUP BY state`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			t.Fatal(err)
		}
		states[s] = n
	}
	rows.Close()
	cleaned := int(l.cleaned.Load())
	if len(states) > 1 || states["completed"]+cleaned != v.Acked {
		t.Errorf("docket_jobs by state %v plus %d cleaned, want only completed jobs adding up to the %d enqueued", states, cleaned, v.Acked)
	}
	l.mu.Lock()
	var want []int64
	for _, id := range l.acked {
		if id%c.effectEvery == 0 {
			want = append(want, id)
		}
	}
	l.mu.Unlock()
	slices.Sort(want)
	var got []int64
	if err := e.pool.QueryRow(context.Background(), `SELECT coalesce(array_agg(job_id ORDER BY job_id), '{}') FROM effects`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("effects: %d rows, want one for each of the %d sampled jobs", len(got), len(want))
	}
	t.Logf("oracle: %d enqueued, %d lost, %d unexpected, %d duplicate executions; docket_jobs left %v + %d cleaned; %d sampled effects, one each",
		v.Acked, v.Lost, v.Unexpected, v.Duplicates, states, cleaned, len(got))
}

// soakSummary renders the run's figures and verdicts as Markdown.
func soakSummary(c soakConfig, samples []soakSample, w soakWindows, crit []soakCriterion, v soakVerdict, rx reindexResult, rec *claimRecorder, end time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Run: %d jobs in %s (%.0f jobs/s overall), %d workers × %d slots, %d tenants, producer ceiling %d/s, retention %s, clean interval %s, samples every %s (%d).\n\n",
		c.jobs, end.Round(time.Second), float64(c.jobs)/end.Seconds(), c.workers, c.slots, c.tenants, c.rate,
		c.retention, orDefault(c.cleanInterval, "1m (engine default)"), c.sample, len(samples))
	if w.Scale < 1 {
		fmt.Fprintf(&b, "Shorter than %s: size and p99 windows scaled by %.3f.\n\n", soakFullRun, w.Scale)
	}
	b.WriteString("| criterion | result | measured |\n|---|---|---|\n")
	for _, cr := range crit {
		res := "**FAIL**"
		if cr.Pass {
			res = "pass"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", cr.Name, res, cr.Detail)
	}
	all, failed := rec.window(0, end)
	fmt.Fprintf(&b, "\nClaims: %d over the run, %d failed; p50 %s, p99 %s.\n", len(all), failed, ms(percentile(all, 0.5)), ms(percentile(all, 0.99)))
	fmt.Fprintf(&b, "Ledger: %d enqueued, %d lost, %d unexpected, %d duplicate executions, %d double completions, other outcomes %v.\n",
		v.Acked, v.Lost, v.Unexpected, v.Duplicates, v.DoubleDone, v.Other)
	if len(samples) > 0 {
		first, last := samples[0], samples[len(samples)-1]
		peak := slices.MaxFunc(samples, func(a, b soakSample) int { return int(a.TotalBytes - b.TotalBytes) })
		fmt.Fprintf(&b, "Sizes: docket_jobs total %s at %s, peak %s at %s, %s at the end (heap %s, indexes %s); docket_job_attempts %s at the end. Cleaned %d.\n",
			mb(first.TotalBytes), fmtMin(first.At), mb(peak.TotalBytes), fmtMin(peak.At), mb(last.TotalBytes),
			mb(last.HeapBytes), mb(last.IndexBytes), mb(last.AttemptsBytes), last.Cleaned)
	}
	_ = rx
	return b.String()
}

func orDefault(d time.Duration, def string) string {
	if d == 0 {
		return def
	}
	return d.String()
}
