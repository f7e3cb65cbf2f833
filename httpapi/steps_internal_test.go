package httpapi

import "testing"

// TestStepsProgress: a waiting job's progress is its steps', weighted by
// their pages, between stepsFrom and stepsTo; the message counts the
// pages of completed steps, or the steps when they have no pages.
func TestStepsProgress(t *testing.T) {
	t.Parallel()
	pages := func(first, last, pct int, status string) StepView {
		return StepView{FirstPage: first, LastPage: last, ProgressPercent: pct, Status: status}
	}
	for _, tc := range []struct {
		steps   []StepView
		percent int
		message string
	}{
		{[]StepView{pages(1, 32, 0, "pending"), pages(33, 40, 0, "pending")}, stepsFrom, "0 of 40 pages processed in 2 steps"},
		{[]StepView{pages(1, 32, 100, "completed"), pages(33, 40, 0, "pending")}, 5 + 90*32/40, "32 of 40 pages processed in 2 steps"},
		{[]StepView{pages(1, 32, 100, "completed"), pages(33, 40, 50, "processing")}, 5 + 90*(3200+400)/4000, "32 of 40 pages processed in 2 steps"},
		{[]StepView{pages(1, 2, 100, "completed"), pages(3, 3, 100, "completed")}, stepsTo, "3 of 3 pages processed in 2 steps"},
		{[]StepView{{ProgressPercent: 100, Status: "completed"}, {Status: "pending"}}, 5 + 45, "1 of 2 steps processed in 2 steps"},
	} {
		percent, message := stepsProgress(tc.steps)
		if percent != tc.percent || message != tc.message {
			t.Errorf("stepsProgress(%+v) = %d, %q; want %d, %q", tc.steps, percent, message, tc.percent, tc.message)
		}
	}
}
