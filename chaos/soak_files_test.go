package chaos

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// The churn soak's files: its samples as CSV, what the charts need beside
// them as run.json, and the charts.

// soakCSVHeader names the columns of soak.csv.
var soakCSVHeader = []string{
	"t_s", "enqueued", "completed", "cleaned", "jobs_per_s",
	"heap_bytes", "indexes_bytes", "total_bytes", "fetch_index_bytes", "attempts_total_bytes",
	"n_live_tup", "n_dead_tup", "autovacuum_count", "autoanalyze_count", "last_autovacuum",
	"claims", "claim_errors", "claim_p50_ms", "claim_p99_ms", "claim_max_ms", "load1",
}

// writeSoakCSV writes the samples to path.
func writeSoakCSV(path string, samples []soakSample) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write(soakCSVHeader)
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	msf := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64)
	}
	for _, s := range samples {
		last, load := "", ""
		if !s.LastAutovacuum.IsZero() {
			last = s.LastAutovacuum.UTC().Format(time.RFC3339Nano)
		}
		if !math.IsNaN(s.Load1) {
			load = strconv.FormatFloat(s.Load1, 'f', 2, 64)
		}
		_ = w.Write([]string{
			strconv.FormatFloat(s.At.Seconds(), 'f', 1, 64), i64(s.Enqueued), i64(s.Completed), i64(s.Cleaned),
			strconv.FormatFloat(s.Throughput, 'f', 1, 64),
			i64(s.HeapBytes), i64(s.IndexBytes), i64(s.TotalBytes), i64(s.FetchBytes), i64(s.AttemptsBytes),
			i64(s.LiveTup), i64(s.DeadTup), i64(s.Autovacuums), i64(s.Autoanalyzes), last,
			strconv.Itoa(s.Claims), strconv.Itoa(s.ClaimErrors), msf(s.ClaimP50), msf(s.ClaimP99), msf(s.ClaimMax), load,
		})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// readSoakCSV reads a soak.csv back (a file without the load1 column, from
// before it existed, reads with the load unknown). The per-window claim
// figures come back; the claims themselves are not in the file.
func readSoakCSV(path string) ([]soakSample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 || len(rows[0]) < len(soakCSVHeader)-1 || rows[0][0] != soakCSVHeader[0] {
		return nil, fmt.Errorf("%s: not a soak CSV", path)
	}
	var out []soakSample
	for n, row := range rows[1:] {
		p := soakCSVParser{row: row}
		s := soakSample{
			At: p.dur(0, time.Second), Enqueued: p.i64(1), Completed: p.i64(2), Cleaned: p.i64(3), Throughput: p.f64(4),
			HeapBytes: p.i64(5), IndexBytes: p.i64(6), TotalBytes: p.i64(7), FetchBytes: p.i64(8), AttemptsBytes: p.i64(9),
			LiveTup: p.i64(10), DeadTup: p.i64(11), Autovacuums: p.i64(12), Autoanalyzes: p.i64(13),
			Claims: int(p.i64(15)), ClaimErrors: int(p.i64(16)),
			ClaimP50: p.dur(17, time.Millisecond), ClaimP99: p.dur(18, time.Millisecond), ClaimMax: p.dur(19, time.Millisecond),
			Load1: math.NaN(), LastAutovacuumRel: math.NaN(),
		}
		if row[14] != "" {
			s.LastAutovacuum, p.err = time.Parse(time.RFC3339Nano, row[14])
		}
		if len(row) > 20 && row[20] != "" {
			s.Load1 = p.f64(20)
		}
		if p.err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, n+2, p.err)
		}
		out = append(out, s)
	}
	return out, nil
}

// soakCSVParser parses the fields of one row, keeping the first error.
type soakCSVParser struct {
	row []string
	err error
}

func (p *soakCSVParser) f64(i int) float64 {
	if i >= len(p.row) {
		p.err = fmt.Errorf("no column %d", i)
		return 0
	}
	v, err := strconv.ParseFloat(p.row[i], 64)
	if err != nil && p.err == nil {
		p.err = err
	}
	return v
}

func (p *soakCSVParser) i64(i int) int64 { return int64(p.f64(i)) }

func (p *soakCSVParser) dur(i int, unit time.Duration) time.Duration {
	return time.Duration(p.f64(i) * float64(unit))
}

// soakRunMeta is what the charts need beside the samples: the criteria's
// windows, the REINDEX and the start of the load by the database clock
// (to place autovacuum completions).
type soakRunMeta struct {
	Title        string      `json:"title"`
	Windows      soakWindows `json:"windows"`
	ReindexRan   bool        `json:"reindex_ran"`
	ReindexFromS float64     `json:"reindex_from_s"`
	ReindexToS   float64     `json:"reindex_to_s"`
	LoadStartDB  time.Time   `json:"load_start_db"`
}

func (m soakRunMeta) reindex() reindexResult {
	return reindexResult{Ran: m.ReindexRan, From: time.Duration(m.ReindexFromS * float64(time.Second)),
		To: time.Duration(m.ReindexToS * float64(time.Second))}
}

// placeAutovacuums sets LastAutovacuumRel from LastAutovacuum.
func placeAutovacuums(samples []soakSample, startDB time.Time) {
	for i := range samples {
		samples[i].LastAutovacuumRel = math.NaN()
		if !samples[i].LastAutovacuum.IsZero() {
			samples[i].LastAutovacuumRel = samples[i].LastAutovacuum.Sub(startDB).Seconds()
		}
	}
}

// writeSoakOutputs writes soak.csv, run.json and the charts into dir.
func writeSoakOutputs(dir string, samples []soakSample, meta soakRunMeta) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	paths := []string{filepath.Join(dir, "soak.csv"), filepath.Join(dir, "run.json")}
	if err := writeSoakCSV(paths[0], samples); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(paths[1], append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	for name, c := range soakCharts(samples, meta.Windows, meta.reindex(), meta.Title) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, c.svg(), 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// replotSoak redraws the charts of a run from its soak.csv and run.json.
func replotSoak(dir string) ([]string, error) {
	samples, err := readSoakCSV(filepath.Join(dir, "soak.csv"))
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return nil, err
	}
	var meta soakRunMeta
	if err := json.Unmarshal(b, &meta); err != nil {
		return nil, fmt.Errorf("run.json: %w", err)
	}
	placeAutovacuums(samples, meta.LoadStartDB)
	return writeSoakOutputs(dir, samples, meta)
}
