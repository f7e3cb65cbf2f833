package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/docketq/docket/pipeline/extract"
)

// recorder is a fake clock and the reports a reporter wrote, without a queue.
type recorder struct {
	now     time.Time
	reports []string
	fail    error
}

func (rec *recorder) reporter() *reporter {
	return &reporter{
		now: func() time.Time { return rec.now },
		report: func(_ context.Context, stage string, percent int, message string, partial json.RawMessage) error {
			rec.reports = append(rec.reports, fmt.Sprintf("%s %d %s", stage, percent, message))
			if partial != nil {
				rec.reports[len(rec.reports)-1] += " " + string(partial)
			}
			return rec.fail
		},
	}
}

func TestReporter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := &recorder{now: time.Unix(0, 0)}
	r := rec.reporter()
	step := func(d time.Duration) { rec.now = rec.now.Add(d) }

	_ = r.enter(ctx, StageParsing, "start", nil)
	r.update(ctx, 1, 10, "1") // too soon: held
	step(progressGap)
	r.update(ctx, 2, 10, "2")    // written
	r.update(ctx, 3, 10, "3")    // held
	r.update(ctx, 1, 10, "back") // backwards: dropped
	step(progressGap)
	_ = r.enter(ctx, StageChunking, "next", nil) // writes "3" first
	r.update(ctx, 10, 10, "end")                 // held, then lost: too soon for enter
	_ = r.enter(ctx, StageEmbedding, "embed", nil)
	step(progressGap)
	r.update(ctx, 20, 10, "over") // capped at the stage's end

	want := []string{"parsing 5 start", "parsing 15 2", "parsing 20 3", "chunking 55 next",
		"embedding 65 embed", "embedding 85 over"}
	if fmt.Sprint(rec.reports) != fmt.Sprint(want) {
		t.Fatalf("reports\n%q\nwant\n%q", rec.reports, want)
	}

	rec.fail = errors.New("store down")
	_ = r.enter(ctx, StageAnalyzing, "analyze", nil)
	if !errors.Is(r.failed(), rec.fail) {
		t.Fatalf("failed() = %v", r.failed())
	}
}

func TestStage_Percent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		done, total, want int
	}{
		{0, 10, 5}, {1, 10, 10}, {10, 10, 55}, {11, 10, 55}, {3, 0, 5}, {-1, 10, 5},
	}
	for _, tt := range tests {
		if got := StageParsing.Percent(tt.done, tt.total); got != tt.want {
			t.Errorf("Percent(%d, %d) = %d, want %d", tt.done, tt.total, got, tt.want)
		}
	}
	for i := 1; i < len(Stages); i++ {
		if Stages[i].From != Stages[i-1].To {
			t.Errorf("stage %s starts at %d, %s ends at %d", Stages[i].Name, Stages[i].From, Stages[i-1].Name, Stages[i-1].To)
		}
	}
}

func TestTypeOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		contentType string
		want        extract.Type
	}{
		{"application/pdf", extract.TypePDF},
		{"Application/PDF", extract.TypePDF},
		{extract.TypeDOCX.MIME(), extract.TypeDOCX},
		{"text/html; charset=utf-8", extract.TypeHTML},
		{"text/html", extract.TypeHTML},
		{"text/markdown; charset=utf-8", extract.TypeMarkdown},
		{"text/plain; charset=utf-8", extract.TypeText},
		{"image/png", extract.TypeUnknown},
		{"", extract.TypeUnknown},
		{"not a; type=", extract.TypeUnknown},
	}
	for _, tt := range tests {
		got, err := typeOf(tt.contentType)
		if got != tt.want || (err != nil) != (tt.want == extract.TypeUnknown) {
			t.Errorf("typeOf(%q) = %q, %v; want %q", tt.contentType, got, err, tt.want)
		}
		if err != nil && !errors.Is(err, extract.ErrUnsupported) {
			t.Errorf("typeOf(%q): %v is not ErrUnsupported", tt.contentType, err)
		}
	}
}
