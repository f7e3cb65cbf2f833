package chaos

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// The churn soak's outputs: its samples as CSV and its curves as SVG,
// written by hand with the standard library.

// soakCSVHeader names the columns of soak.csv.
var soakCSVHeader = []string{
	"t_s", "enqueued", "completed", "cleaned", "jobs_per_s",
	"heap_bytes", "indexes_bytes", "total_bytes", "fetch_index_bytes", "attempts_total_bytes",
	"n_live_tup", "n_dead_tup", "autovacuum_count", "autoanalyze_count", "last_autovacuum",
	"claims", "claim_errors", "claim_p50_ms", "claim_p99_ms", "claim_max_ms",
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
		last := ""
		if !s.LastAutovacuum.IsZero() {
			last = s.LastAutovacuum.UTC().Format(time.RFC3339Nano)
		}
		_ = w.Write([]string{
			strconv.FormatFloat(s.At.Seconds(), 'f', 1, 64), i64(s.Enqueued), i64(s.Completed), i64(s.Cleaned),
			strconv.FormatFloat(s.Throughput, 'f', 1, 64),
			i64(s.HeapBytes), i64(s.IndexBytes), i64(s.TotalBytes), i64(s.FetchBytes), i64(s.AttemptsBytes),
			i64(s.LiveTup), i64(s.DeadTup), i64(s.Autovacuums), i64(s.Autoanalyzes), last,
			strconv.Itoa(s.Claims), strconv.Itoa(s.ClaimErrors), msf(s.ClaimP50), msf(s.ClaimP99), msf(s.ClaimMax),
		})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// plotSeries is one curve of a chart.
type plotSeries struct {
	Name  string
	Color string
	Y     []float64
}

// plotBand is a shaded range of the x axis (minutes), with a label.
type plotBand struct {
	From, To float64
	Label    string
	Color    string
}

// plotChart is a line chart over minutes since the load began.
type plotChart struct {
	Title, YLabel string
	X             []float64 // minutes
	Series        []plotSeries
	Bands         []plotBand
	Marks         []float64 // vertical ticks at these minutes (autovacuum completions)
	MarkLabel     string
}

// Layout of every chart, in SVG user units.
const (
	plotW, plotH                         = 900, 360
	plotLeft, plotRight, plotTop, plotBo = 80, 20, 40, 60
)

// svg renders the chart.
func (c plotChart) svg() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		plotW, plotH, plotW, plotH)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", plotW, plotH)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", plotLeft, html.EscapeString(c.Title))
	xmax := 1.0
	for _, x := range c.X {
		xmax = max(xmax, x)
	}
	ymax := 0.0
	for _, s := range c.Series {
		for _, y := range s.Y {
			if !math.IsNaN(y) {
				ymax = max(ymax, y)
			}
		}
	}
	xstep, ystep := niceStep(xmax), niceStep(ymax)
	xmax = math.Ceil(xmax/xstep) * xstep
	ymax = math.Max(math.Ceil(ymax/ystep)*ystep, ystep)
	iw, ih := float64(plotW-plotLeft-plotRight), float64(plotH-plotTop-plotBo)
	px := func(x float64) float64 { return plotLeft + x/xmax*iw }
	py := func(y float64) float64 { return plotTop + ih - y/ymax*ih }

	for _, band := range c.Bands {
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%.0f" fill="%s" fill-opacity="0.15"/>`+"\n",
			px(band.From), plotTop, math.Max(px(band.To)-px(band.From), 1), ih, band.Color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="10" fill="%s">%s</text>`+"\n",
			px(band.From)+2, plotTop+12, band.Color, html.EscapeString(band.Label))
	}
	for y := 0.0; y <= ymax+ystep/2; y += ystep {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", plotLeft, plotW-plotRight, py(y), py(y))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", plotLeft-6, py(y)+4, fmtTick(y))
	}
	for x := 0.0; x <= xmax+xstep/2; x += xstep {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%.0f" stroke="#eee"/>`+"\n", px(x), px(x), plotTop, plotTop+ih)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n", px(x), plotTop+ih+16, fmtTick(x))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#444"/>`+"\n", plotLeft, plotTop, iw, ih)
	fmt.Fprintf(&b, `<text x="%.0f" y="%d" text-anchor="middle">minutes since the load began</text>`+"\n", plotLeft+iw/2, plotH-22)
	fmt.Fprintf(&b, `<text transform="translate(16 %.0f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", plotTop+ih/2, html.EscapeString(c.YLabel))
	for _, m := range c.Marks {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" stroke="#2a7" stroke-width="2"/>`+"\n", px(m), px(m), plotTop+ih-10, plotTop+ih)
	}
	for _, s := range c.Series {
		var pts bytes.Buffer
		for i, y := range s.Y {
			if i < len(c.X) && !math.IsNaN(y) {
				fmt.Fprintf(&pts, "%.1f,%.1f ", px(c.X[i]), py(y))
			}
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", s.Color, bytes.TrimSpace(pts.Bytes()))
	}
	legend := c.Series
	lx := float64(plotLeft) + 10
	for _, s := range legend {
		fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%d" y2="%d" stroke="%s" stroke-width="3"/>`, lx, lx+18, plotH-8, plotH-8, s.Color)
		fmt.Fprintf(&b, `<text x="%.0f" y="%d">%s</text>`+"\n", lx+22, plotH-4, html.EscapeString(s.Name))
		lx += 40 + 7*float64(len(s.Name))
	}
	if len(c.Marks) > 0 && c.MarkLabel != "" {
		fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%d" y2="%d" stroke="#2a7" stroke-width="2"/>`, lx, lx, plotH-14, plotH-2)
		fmt.Fprintf(&b, `<text x="%.0f" y="%d">%s</text>`+"\n", lx+6, plotH-4, html.EscapeString(c.MarkLabel))
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// niceStep returns a tick step of 1, 2 or 5 × 10^k giving about five
// ticks up to v.
func niceStep(v float64) float64 {
	if v <= 0 {
		return 1
	}
	raw := v / 5
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func fmtTick(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// soakCharts returns the four charts of a run: size, dead tuples, claim
// latency and throughput, with the criteria's windows shaded.
func soakCharts(samples []soakSample, w soakWindows, rx reindexResult, title string) map[string]plotChart {
	n := len(samples)
	x := make([]float64, n)
	col := func(f func(s soakSample) float64) []float64 {
		out := make([]float64, n)
		for i, s := range samples {
			out[i] = f(s)
		}
		return out
	}
	for i, s := range samples {
		x[i] = s.At.Minutes()
	}
	toMB := func(v int64) float64 { return float64(v) / (1 << 20) }
	bands := []plotBand{
		{From: w.BaseFrom.Minutes(), To: w.BaseTo.Minutes(), Label: "p99 baseline", Color: "#36c"},
		{From: w.LastFrom.Minutes(), To: w.End.Minutes(), Label: "last window", Color: "#c63"},
	}
	if rx.Ran {
		bands = append(bands, plotBand{From: rx.From.Minutes(), To: rx.To.Minutes(), Label: "REINDEX", Color: "#a3a"})
	}
	done, _ := autovacuumGaps(samples, w.End)
	marks := make([]float64, len(done))
	for i, d := range done {
		marks[i] = d / 60
	}
	return map[string]plotChart{
		"size.svg": {Title: title + ": docket_jobs size", YLabel: "MB", X: x, Bands: bands, Marks: marks, MarkLabel: "autovacuum done",
			Series: []plotSeries{
				{Name: "table+indexes (total)", Color: "#000", Y: col(func(s soakSample) float64 { return toMB(s.TotalBytes) })},
				{Name: "heap", Color: "#36c", Y: col(func(s soakSample) float64 { return toMB(s.HeapBytes) })},
				{Name: "indexes", Color: "#c63", Y: col(func(s soakSample) float64 { return toMB(s.IndexBytes) })},
				{Name: "fetch index", Color: "#a3a", Y: col(func(s soakSample) float64 { return toMB(s.FetchBytes) })},
			}},
		"dead.svg": {Title: title + ": docket_jobs tuples", YLabel: "tuples", X: x, Bands: bands, Marks: marks, MarkLabel: "autovacuum done",
			Series: []plotSeries{
				{Name: "n_dead_tup", Color: "#c33", Y: col(func(s soakSample) float64 { return float64(s.DeadTup) })},
				{Name: "n_live_tup", Color: "#36c", Y: col(func(s soakSample) float64 { return float64(s.LiveTup) })},
			}},
		"claim.svg": {Title: title + ": claim latency per window", YLabel: "ms", X: x, Bands: bands,
			Series: []plotSeries{
				{Name: "p50", Color: "#36c", Y: col(func(s soakSample) float64 { return msOrNaN(s, s.ClaimP50) })},
				{Name: "p99", Color: "#c33", Y: col(func(s soakSample) float64 { return msOrNaN(s, s.ClaimP99) })},
			}},
		"throughput.svg": {Title: title + ": completions per second", YLabel: "jobs/s", X: x, Bands: bands,
			Series: []plotSeries{
				{Name: "completed jobs/s", Color: "#000", Y: col(func(s soakSample) float64 { return s.Throughput })},
			}},
	}
}

func msOrNaN(s soakSample, d time.Duration) float64 {
	if s.Claims == 0 {
		return math.NaN()
	}
	return float64(d) / float64(time.Millisecond)
}

// writeSoakOutputs writes soak.csv and the four charts into dir.
func writeSoakOutputs(dir string, samples []soakSample, w soakWindows, rx reindexResult, title string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	paths := []string{filepath.Join(dir, "soak.csv")}
	if err := writeSoakCSV(paths[0], samples); err != nil {
		return nil, err
	}
	for name, c := range soakCharts(samples, w, rx, title) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, c.svg(), 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}
