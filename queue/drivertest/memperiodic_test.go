package drivertest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

func (x *memExec) Now(context.Context) (time.Time, error) { return time.Now(), nil }

func (x *memExec) PeriodicRegister(_ context.Context, ps []*driver.PeriodicRegisterParams) ([]*queue.PeriodicRecord, error) {
	out := make([]*queue.PeriodicRecord, len(ps))
	err := x.write(func(st *memState, _ func(string, string)) error {
		if st.periodic == nil {
			st.periodic = make(map[string]queue.PeriodicRecord)
		}
		for i, p := range ps {
			if p.Name == "" || p.Schedule == "" || p.NextRun.IsZero() {
				return fmt.Errorf("%w: name, schedule and next run are required", queue.ErrInvalid)
			}
			r, ok := st.periodic[p.Name]
			if !ok || r.Schedule != p.Schedule {
				r.Name, r.Schedule, r.NextRun = p.Name, p.Schedule, p.NextRun.Truncate(time.Microsecond)
				st.periodic[p.Name] = r
			}
			out[i] = &r
		}
		return nil
	})
	return out, err
}

func (x *memExec) PeriodicAdvance(_ context.Context, p *driver.PeriodicAdvanceParams) (bool, error) {
	if p.Name == "" || p.Tick.IsZero() || p.NextRun.IsZero() {
		return false, fmt.Errorf("%w: name, tick and next run are required", queue.ErrInvalid)
	}
	var ok bool
	err := x.write(func(st *memState, _ func(string, string)) error {
		r, found := st.periodic[p.Name]
		if !found || r.Schedule != p.Schedule || !r.NextRun.Equal(p.Expect.Truncate(time.Microsecond)) {
			return nil
		}
		r.LastTick, r.NextRun = p.Tick.Truncate(time.Microsecond), p.NextRun.Truncate(time.Microsecond)
		r.LastRunAt, r.Runs, r.Missed = time.Now().Truncate(time.Microsecond), r.Runs+1, r.Missed+int64(p.Missed)
		st.periodic[p.Name], ok = r, true
		return nil
	})
	return ok, err
}

func (x *memExec) PeriodicList(_ context.Context) ([]*queue.PeriodicRecord, error) {
	var out []*queue.PeriodicRecord
	err := x.read(func(st *memState) error {
		for _, r := range st.periodic {
			out = append(out, &r)
		}
		slices.SortFunc(out, func(a, b *queue.PeriodicRecord) int { return strings.Compare(a.Name, b.Name) })
		return nil
	})
	return out, err
}
