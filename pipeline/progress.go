package pipeline

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/docketq/docket/queue"
)

// Stage is a step of the job with its share of the progress bar.
type Stage struct {
	Name     string
	From, To int // percent range
}

// The stages, in order, each with its range of the job's percent.
var (
	StageDownloading = Stage{Name: "downloading", From: 0, To: 5}
	StageParsing     = Stage{Name: "parsing", From: 5, To: 55}
	StageChunking    = Stage{Name: "chunking", From: 55, To: 65}
	StageEmbedding   = Stage{Name: "embedding", From: 65, To: 85}
	StageAnalyzing   = Stage{Name: "analyzing", From: 85, To: 100}
)

// Stages lists the stages in the order a job goes through them.
var Stages = []Stage{StageDownloading, StageParsing, StageChunking, StageEmbedding, StageAnalyzing}

// Percent maps done of total to the stage's range (From when total ≤ 0).
func (s Stage) Percent(done, total int) int {
	if total <= 0 || done <= 0 {
		return s.From
	}
	done = min(done, total)
	return s.From + (s.To-s.From)*done/total
}

// progressGap is the least time between two progress reports within a
// stage. It is above the queue's own coalescing interval (250ms), so every
// report the reporter lets through is written at once and in order: the
// queue never holds a coalesced write that could land after the next stage's.
const progressGap = 300 * time.Millisecond

// progressFunc is the seam of queue.Task.ProgressPartial (a nil partial
// result is a plain progress report).
type progressFunc func(ctx context.Context, stage string, percent int, message string, partial json.RawMessage) error

// reporter reports a job's progress: stage by stage, percent never going
// backwards, within-stage updates thinned to one per progressGap. Safe for
// concurrent use (parsers report from their own goroutine).
type reporter struct {
	report progressFunc
	now    func() time.Time

	mu      sync.Mutex
	stage   Stage
	percent int
	last    time.Time
	held    *heldReport // the latest report thinned out, if any
	err     error       // the first failed report
}

// heldReport is a within-stage report not written yet.
type heldReport struct {
	percent int
	message string
}

func newReporter(t *queue.Task) *reporter {
	return &reporter{report: t.ProgressPartial, now: time.Now}
}

// enter starts stage s at its From percent and writes it at once, with
// partial, the job's partial result, unless nil. The last report of the
// stage before, if it was thinned out, is written first when it can be
// without being coalesced (see progressGap).
func (r *reporter) enter(ctx context.Context, s Stage, message string, partial json.RawMessage) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h := r.held; h != nil && r.err == nil && r.now().Sub(r.last) >= progressGap {
		r.percent = h.percent
		if err := r.write(ctx, h.message, nil); err != nil {
			return err
		}
	}
	r.held = nil
	r.stage, r.percent = s, max(r.percent, s.From)
	return r.write(ctx, message, partial)
}

// found reports done of total within the current stage with partial, the
// job's partial result, at once: the queue writes a report with a partial
// result without coalescing it, so nothing is left pending after it.
func (r *reporter) found(ctx context.Context, done, total int, message string, partial json.RawMessage) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held, r.percent = nil, max(r.percent, r.stage.Percent(done, total))
	return r.write(ctx, message, partial)
}

// update reports done of total within the current stage. It drops the
// report when the percent would go backwards or once a report has failed
// (see failed), and holds it back when the previous one is less than
// progressGap old (the next enter writes the last one held, if it can).
func (r *reporter) update(ctx context.Context, done, total int, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pct := r.stage.Percent(done, total)
	if pct < r.percent || r.err != nil {
		return
	}
	if r.now().Sub(r.last) < progressGap {
		r.held = &heldReport{percent: pct, message: message}
		return
	}
	r.held, r.percent = nil, pct
	_ = r.write(ctx, message, nil) // kept in r.err
}

// write sends the current stage and percent, and partial unless nil; r.mu
// is held.
func (r *reporter) write(ctx context.Context, message string, partial json.RawMessage) error {
	err := r.report(ctx, r.stage.Name, r.percent, message, partial)
	r.last = r.now() // after the call: the queue's own clock started inside it
	if err != nil && r.err == nil {
		r.err = err
	}
	return err
}

// failed returns the first report that failed.
func (r *reporter) failed() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
