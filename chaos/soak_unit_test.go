package chaos

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The churn soak's criteria and outputs on made-up series (the soak itself
// needs -tags soak).

// soakSeries returns a 20-minute run sampled every 10 s, with the total
// size and dead tuples given per minute, and an autovacuum completion at
// each of vacuums (minutes).
func soakSeries(size func(min float64) int64, vacuums ...float64) []soakSample {
	var out []soakSample
	count := int64(0)
	for s := 10; s <= 1200; s += 10 {
		at := time.Duration(s) * time.Second
		x := soakSample{At: at, TotalBytes: size(at.Minutes()), LastAutovacuumRel: math.NaN()}
		for _, v := range vacuums {
			if v*60 <= float64(s) {
				count++
				x.LastAutovacuumRel = v * 60
			}
		}
		x.Autovacuums, count = count, 0
		out = append(out, x)
	}
	return out
}

func TestSoakCriteria_Size(t *testing.T) {
	w := soakWindowsFor(20 * time.Minute)
	flat := soakSeries(func(m float64) int64 { return int64(100 + 10*min(m, 10)) })
	if c := evalSize(flat, w); !c.Pass {
		t.Errorf("a plateau fails: %s", c.Detail)
	}
	growing := soakSeries(func(m float64) int64 { return int64(100 * m) })
	if c := evalSize(growing, w); c.Pass {
		t.Errorf("linear growth (2× from minute 10 to 20) passes: %s", c.Detail)
	}
}

func TestSoakCriteria_ClaimP99(t *testing.T) {
	w := soakWindowsFor(20 * time.Minute)
	rec := func(late time.Duration) *claimRecorder {
		r := newClaimRecorder(time.Time{})
		for s := range 1200 {
			d := time.Millisecond
			if s%50 == 0 { // 2% of claims are slow: the p99
				d = 10 * time.Millisecond
				if s >= 900 {
					d = late
				}
			}
			r.recs = append(r.recs, claimRec{end: time.Duration(s) * time.Second, dur: d})
		}
		return r
	}
	if c := evalClaimP99(rec(15*time.Millisecond), w); !c.Pass {
		t.Errorf("p99 1.5× passes not: %s", c.Detail)
	}
	if c := evalClaimP99(rec(25*time.Millisecond), w); c.Pass {
		t.Errorf("p99 2.5× passes: %s", c.Detail)
	}
}

func TestSoakCriteria_Autovacuum(t *testing.T) {
	w := soakWindowsFor(20 * time.Minute)
	size := func(float64) int64 { return 1 }
	every90s := soakSeries(size, 1.5, 3, 4.5, 6, 7.5, 9, 10.5, 12, 13.5, 15, 16.5, 18, 19.5)
	if c := evalAutovacuum(every90s, w); !c.Pass {
		t.Errorf("every 90 s fails: %s", c.Detail)
	}
	if done, gap := autovacuumGaps(every90s, w.End); len(done) != 13 || gap != 90*time.Second {
		t.Errorf("gaps: %d completions, longest %s; want 13, 1m30s", len(done), gap)
	}
	stalled := soakSeries(size, 1.5, 3, 4.5, 8, 9.5, 11, 12.5, 14, 15.5, 17, 18.5)
	if c := evalAutovacuum(stalled, w); c.Pass {
		t.Errorf("a 3.5-minute gap passes: %s", c.Detail)
	}
	late := soakSeries(size, 1, 2.5, 4, 5.5, 7, 8.5, 10, 11.5, 13, 14.5, 16, 17.5)
	if c := evalAutovacuum(late, w); c.Pass {
		t.Errorf("none in the last 2.5 minutes passes: %s", c.Detail)
	}
}

func TestSoakCriteria_Reindex(t *testing.T) {
	ok := reindexResult{Ran: true, From: time.Minute, To: 2 * time.Minute, Valid: true, ClaimsDuring: 10}
	if c := evalReindex(ok); !c.Pass {
		t.Errorf("a clean REINDEX fails: %s", c.Detail)
	}
	for name, rx := range map[string]reindexResult{
		"not run":        {},
		"failed claim":   {Ran: true, Valid: true, ClaimsDuring: 10, FailuresDuring: 1},
		"invalid index":  {Ran: true, ClaimsDuring: 10},
		"REINDEX failed": {Ran: true, Valid: true, Err: errors.New("deadlock")},
	} {
		if c := evalReindex(rx); c.Pass {
			t.Errorf("%s passes: %s", name, c.Detail)
		}
	}
}

func TestSoakWindows_Scaled(t *testing.T) {
	w := soakWindowsFor(90 * time.Second)
	if w.Scale != 0.1 || w.Ref != time.Minute || w.BaseFrom != 30*time.Second || w.LastFrom != 60*time.Second ||
		w.AutovacuumMaxGap != 2*time.Minute {
		t.Errorf("windows of a 90-second run: %+v", w)
	}
	for _, end := range []time.Duration{15 * time.Minute, 18 * time.Minute, 40 * time.Minute} {
		if w := soakWindowsFor(end); w.Scale != 1 || w.Ref != 10*time.Minute || w.BaseFrom != 5*time.Minute ||
			w.LastFrom != end-5*time.Minute {
			t.Errorf("windows of a %s run: %+v, want the criteria's as written", end, w)
		}
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(101-i)*time.Millisecond)
	}
	if p := percentile(ds, 0.99); p != 99*time.Millisecond {
		t.Errorf("p99 of 1..100 ms: %s", p)
	}
	if p := percentile(ds, 0.5); p != 50*time.Millisecond {
		t.Errorf("p50 of 1..100 ms: %s", p)
	}
	if p := percentile(nil, 0.99); p != 0 {
		t.Errorf("p99 of nothing: %s", p)
	}
}

func TestSoakOutputs(t *testing.T) {
	samples := soakSeries(func(m float64) int64 { return int64(m * (1 << 20)) }, 2, 4, 6)
	for i := range samples {
		samples[i].Claims, samples[i].ClaimP50, samples[i].ClaimP99, samples[i].Throughput = 10, time.Millisecond, time.Duration(i+1)*time.Millisecond, 900
	}
	w := soakWindowsFor(20 * time.Minute)
	rx := reindexResult{Ran: true, From: 12 * time.Minute, To: 12*time.Minute + 5*time.Second}
	for i := range samples {
		samples[i].Load1 = 1.5
		if i%30 == 0 {
			samples[i].LastAutovacuum = time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC)
		}
	}
	meta := soakRunMeta{Title: "test <run>", Windows: w, ReindexRan: true, ReindexFromS: rx.From.Seconds(),
		ReindexToS: rx.To.Seconds(), LoadStartDB: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	dir := t.TempDir()
	paths, err := writeSoakOutputs(dir, samples, meta)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 7 {
		t.Fatalf("outputs %v, want the CSV, run.json and five charts", paths)
	}
	checkSVGs(t, paths[2:], len(samples))
	csvBefore, _ := os.ReadFile(paths[0])
	claimBefore, _ := os.ReadFile(filepath.Join(dir, "claim.svg"))
	if _, err := replotSoak(dir); err != nil {
		t.Fatalf("replot: %v", err)
	}
	csvAfter, _ := os.ReadFile(paths[0])
	claimAfter, _ := os.ReadFile(filepath.Join(dir, "claim.svg"))
	if !bytes.Equal(csvBefore, csvAfter) || !bytes.Equal(claimBefore, claimAfter) {
		t.Errorf("the CSV and the claim chart changed through a read and redraw")
	}
	if !bytes.Contains(claimAfter, []byte("log scale")) {
		t.Errorf("the claim chart is not on a log scale")
	}
	f, err := os.Open(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(samples)+1 || len(rows[0]) != len(soakCSVHeader) || rows[1][0] != "10.0" {
		t.Errorf("CSV: %d rows of %d columns, first %v", len(rows), len(rows[0]), rows[1])
	}
}

// checkSVGs checks that every chart is well-formed XML with curves of n
// points.
func checkSVGs(t *testing.T, paths []string, n int) {
	t.Helper()
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines := 0
		d := xml.NewDecoder(bytes.NewReader(b))
		for {
			tok, err := d.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s is not well-formed XML: %v", filepath.Base(p), err)
			}
			if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
				lines++
				for _, a := range se.Attr {
					if a.Name.Local == "points" && strings.Count(a.Value, ",") != n {
						t.Errorf("%s: a curve of %d points, want %d", filepath.Base(p), strings.Count(a.Value, ","), n)
					}
				}
			}
		}
		if lines == 0 {
			t.Errorf("%s has no curve", filepath.Base(p))
		}
	}
}

func TestClaimRecorder(t *testing.T) {
	r := newClaimRecorder(time.Now())
	r.add(time.Now(), 10, nil)
	r.add(time.Now(), 0, errors.New("connection reset"))
	r.add(time.Now(), 3, nil)
	durs, failed := r.window(0, time.Hour)
	if len(durs) != 3 || failed != 1 {
		t.Errorf("window: %d claims, %d failed; want 3, 1", len(durs), failed)
	}
	if durs, _ := r.window(time.Hour, 2*time.Hour); len(durs) != 0 {
		t.Errorf("a later window holds %d claims", len(durs))
	}
	if fs := r.failures(); len(fs) != 1 || !strings.Contains(fs[0], "connection reset") {
		t.Errorf("failures: %q", fs)
	}
	if r.recs[0].jobs != 10 || r.recs[2].jobs != 3 || !r.recs[1].failed {
		t.Errorf("records: %+v", r.recs)
	}
	w := soakWindowsFor(time.Second)
	crit := evalSoak(nil, r, w, reindexResult{})
	if len(crit) != 4 {
		t.Fatalf("%d criteria, want the soak's four", len(crit))
	}
	for _, c := range crit {
		if c.Name != "autovacuum cadence" && c.Pass {
			t.Errorf("%s passes with no samples and no REINDEX: %s", c.Name, c.Detail)
		}
	}
}
