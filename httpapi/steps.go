package httpapi

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
)

// StepView is a step of a workflow job as the API shows it: for a long
// PDF's document job, a range of its pages processed as a job of its own.
type StepView struct {
	Name            string  `json:"name"`
	JobID           string  `json:"job_id"`
	Kind            string  `json:"kind"`
	Status          string  `json:"status"`
	Stage           string  `json:"stage"`
	ProgressPercent int     `json:"progress_percent"`
	FirstPage       int     `json:"first_page,omitempty"` // a document's range; 0: none
	LastPage        int     `json:"last_page,omitempty"`
	ErrorMessage    *string `json:"error_message"`
}

// stepView renders a step of a workflow.
func stepView(j *queue.Job) StepView {
	v := jobView(j, -1)
	s := StepView{Name: j.StepName(), JobID: v.ID, Kind: j.Kind, Status: v.Status, Stage: v.Stage,
		ProgressPercent: v.ProgressPercent, ErrorMessage: v.ErrorMessage}
	if j.Kind == docket.DocumentPagesKind {
		var a docket.DocumentPagesArgs
		if json.Unmarshal(j.Args, &a) == nil {
			s.FirstPage, s.LastPage = a.FirstPage, a.LastPage
		}
	}
	return s
}

// withSteps adds the steps of the workflow job j to v, when it has any;
// while j waits for them, its progress is theirs (stepsProgress).
func (s *Server) withSteps(ctx context.Context, v *JobView, j *queue.Job) error {
	steps, err := s.cfg.Queue.Children(ctx, j.ID)
	if err != nil || len(steps) == 0 {
		return err
	}
	v.Steps = make([]StepView, len(steps))
	for i, st := range steps {
		v.Steps[i] = stepView(st)
	}
	if j.State == queue.StateWaiting {
		v.ProgressPercent, v.ProgressMessage = stepsProgress(v.Steps)
	}
	return nil
}

// Of a waiting workflow job's progress, the share its steps make: from
// stepsFrom percent (the parse's start) to stepsTo (the rest is the
// merge of their results).
const (
	stepsFrom = 5
	stepsTo   = 95
)

// stepsProgress returns the progress of a job that waits for steps: their
// progress weighted by their pages (1 each for steps without pages), and
// a message that counts the pages, or steps, done.
func stepsProgress(steps []StepView) (percent int, message string) {
	var total, done, weighted int
	for _, st := range steps {
		w := max(st.LastPage-st.FirstPage+1, 1)
		if st.FirstPage == 0 {
			w = 1
		}
		total += w
		weighted += w * st.ProgressPercent
		if st.Status == string(docket.StatusCompleted) {
			done += w
		}
	}
	percent = stepsFrom + (stepsTo-stepsFrom)*weighted/(100*total)
	unit := "pages"
	if steps[0].FirstPage == 0 {
		unit = "steps"
	}
	return percent, fmt.Sprintf("%d of %d %s processed in %d steps", done, total, unit, len(steps))
}
