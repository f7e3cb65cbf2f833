package httpapi_test

import (
	"testing"
	"time"

	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue/driver"
)

// TestAdmin_Periodic: GET /v1/admin/periodic lists the store's periodic
// records, a task that ran with its last tick and run, one that has not
// with nulls; the admin key is required.
func TestAdmin_Periodic(t *testing.T) {
	t.Parallel()
	forEachAdminStore(t, nil, func(t *testing.T, e *adminEnv) {
		next := time.Now().Add(time.Minute).UTC().Truncate(time.Second)
		x := e.driver.Executor()
		if _, err := x.PeriodicRegister(e.ctx, []*driver.PeriodicRegisterParams{
			{Name: "docket.rescue", Schedule: "@every 5s", NextRun: next},
			{Name: "report", Schedule: "0 * * * *", NextRun: next},
		}); err != nil {
			t.Fatal(err)
		}
		if ok, err := x.PeriodicAdvance(e.ctx, &driver.PeriodicAdvanceParams{
			Name: "report", Schedule: "0 * * * *", Expect: next, Tick: next, NextRun: next.Add(time.Hour), Missed: 2,
		}); err != nil || !ok {
			t.Fatalf("advance: %v, %v", ok, err)
		}
		if r := e.do("GET", "/v1/admin/periodic", "", nil); r.status != 401 {
			t.Fatalf("without the admin key: %d, want 401", r.status)
		}
		var got httpapi.PeriodicListView
		e.admin("GET", "/v1/admin/periodic", nil, 200).decode(t, &got)
		if len(got.Periodic) != 2 {
			t.Fatalf("periodic = %+v, want 2 tasks", got)
		}
		rescue, report := got.Periodic[0], got.Periodic[1]
		if rescue.Name != "docket.rescue" || rescue.Schedule != "@every 5s" || rescue.LastTick != nil ||
			rescue.LastRunAt != nil || !rescue.NextRun.Equal(next) || rescue.Runs != 0 {
			t.Errorf("task that has not run: %+v", rescue)
		}
		if report.Name != "report" || report.LastTick == nil || !report.LastTick.Equal(next) || report.LastRunAt == nil ||
			!report.NextRun.Equal(next.Add(time.Hour)) || report.Runs != 1 || report.Missed != 2 {
			t.Errorf("task that ran: %+v", report)
		}
	})
}
