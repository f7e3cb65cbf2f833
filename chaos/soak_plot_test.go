package chaos

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"time"
)

// The churn soak's curves as SVG, written by hand with the standard
// library.

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
	Rules         []plotRule // dashed lines
	LogY          bool       // a logarithmic y axis (values <= 0 are left out)
}

// plotRule is a dashed line across the chart: horizontal at Y, or
// vertical at X (minutes) when Vertical.
type plotRule struct {
	Vertical bool
	At       float64
	Label    string
	Color    string
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
	ymin, ymax := math.Inf(1), 0.0
	for _, s := range c.Series {
		for _, y := range s.Y {
			if !math.IsNaN(y) && (!c.LogY || y > 0) {
				ymin, ymax = min(ymin, y), max(ymax, y)
			}
		}
	}
	for _, r := range c.Rules {
		if !r.Vertical {
			ymax = max(ymax, r.At*1.08) // room for its label
		}
	}
	xstep := niceStep(xmax)
	xmax = math.Ceil(xmax/xstep) * xstep
	iw, ih := float64(plotW-plotLeft-plotRight), float64(plotH-plotTop-plotBo)
	px := func(x float64) float64 { return plotLeft + x/xmax*iw }
	var py func(y float64) float64
	var yticks []float64
	if c.LogY {
		lo := math.Floor(math.Log10(math.Min(ymin, math.Max(ymax, 1e-3))))
		hi := math.Max(math.Ceil(math.Log10(math.Max(ymax, 1e-3))), lo+1)
		py = func(y float64) float64 { return plotTop + ih - (math.Log10(y)-lo)/(hi-lo)*ih }
		for e := lo; e <= hi; e++ {
			yticks = append(yticks, math.Pow(10, e))
		}
	} else {
		ystep := niceStep(ymax)
		ymax = math.Max(math.Ceil(ymax/ystep)*ystep, ystep)
		py = func(y float64) float64 { return plotTop + ih - y/ymax*ih }
		for y := 0.0; y <= ymax+ystep/2; y += ystep {
			yticks = append(yticks, y)
		}
	}

	for _, band := range c.Bands {
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%.0f" fill="%s" fill-opacity="0.15"/>`+"\n",
			px(band.From), plotTop, math.Max(px(band.To)-px(band.From), 1), ih, band.Color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="10" fill="%s">%s</text>`+"\n",
			px(band.From)+2, plotTop+12, band.Color, html.EscapeString(band.Label))
	}
	for _, y := range yticks {
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
	for _, r := range c.Rules {
		x1, x2, y1, y2 := float64(plotLeft), float64(plotW-plotRight), py(r.At), py(r.At)
		tx, ty, anchor := x2-4, y1-4, "end"
		if r.Vertical {
			x1, x2, y1, y2 = px(r.At), px(r.At), float64(plotTop), plotTop+ih
			tx, ty, anchor = x1+4, plotTop+26, "start"
		}
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="6 4"/>`+"\n", x1, x2, y1, y2, r.Color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="%s" font-size="10" fill="%s">%s</text>`+"\n", tx, ty, anchor, r.Color, html.EscapeString(r.Label))
	}
	for _, s := range c.Series {
		var pts bytes.Buffer
		for i, y := range s.Y {
			if i < len(c.X) && !math.IsNaN(y) && (!c.LogY || y > 0) {
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

// soakCharts returns the charts of a run: size, dead tuples, claim
// latency and throughput, with the criteria's windows shaded, and the
// machine's load when the samples have it.
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
	var sizeRules []plotRule
	if ref := nearestSample(samples, w.Ref); ref != nil {
		sizeRules = []plotRule{
			{Vertical: true, At: w.Ref.Minutes(), Label: "size reference (minute 10)", Color: "#555"},
			{At: w.SizeFactor * toMB(ref.TotalBytes), Label: fmt.Sprintf("bound: %.1f× total at the reference", w.SizeFactor), Color: "#c00"},
		}
	}
	charts := map[string]plotChart{
		"size.svg": {Title: title + ": docket_jobs size", YLabel: "MB", X: x, Bands: bands, Marks: marks, MarkLabel: "autovacuum done", Rules: sizeRules,
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
		"claim.svg": {Title: title + ": claim latency per window (log scale)", YLabel: "ms", X: x, Bands: bands, LogY: true,
			Series: []plotSeries{
				{Name: "p50", Color: "#36c", Y: col(func(s soakSample) float64 { return msOrNaN(s, s.ClaimP50) })},
				{Name: "p99", Color: "#c33", Y: col(func(s soakSample) float64 { return msOrNaN(s, s.ClaimP99) })},
			}},
		"throughput.svg": {Title: title + ": completions per second", YLabel: "jobs/s", X: x, Bands: bands,
			Series: []plotSeries{
				{Name: "completed jobs/s", Color: "#000", Y: col(func(s soakSample) float64 { return s.Throughput })},
			}},
	}
	if slices.ContainsFunc(samples, func(s soakSample) bool { return !math.IsNaN(s.Load1) }) {
		charts["load.svg"] = plotChart{Title: title + ": the machine's load average (1 min)", YLabel: "load", X: x, Bands: bands,
			Series: []plotSeries{{Name: "load average", Color: "#555", Y: col(func(s soakSample) float64 { return s.Load1 })}}}
	}
	return charts
}

func msOrNaN(s soakSample, d time.Duration) float64 {
	if s.Claims == 0 {
		return math.NaN()
	}
	return float64(d) / float64(time.Millisecond)
}
