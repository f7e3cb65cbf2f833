package queue_test

import (
	"errors"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// ParseSchedule passed a spec with a time zone and nothing after it to
// robfig/cron's parser, which slices up to the first space it assumes
// follows the zone: "CRON_TZ=UTC" panicked (slice bounds out of range)
// in NewWorker or ValidatePeriodic, which promise ErrInvalid for a spec
// that does not parse (docs/periodic.md).
func TestParseSchedule_TimeZoneAlone(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"CRON_TZ=UTC", "TZ=Europe/Paris", "CRON_TZ="} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("ParseSchedule(%q) panicked: %v; want ErrInvalid", spec, r)
				}
			}()
			if _, err := queue.ParseSchedule(spec); !errors.Is(err, queue.ErrInvalid) {
				t.Errorf("ParseSchedule(%q): %v, want ErrInvalid", spec, err)
			}
		}()
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("ValidatePeriodic with schedule CRON_TZ=UTC panicked: %v; want ErrInvalid", r)
			}
		}()
		params := func(time.Time) *queue.EnqueueParams { return &queue.EnqueueParams{Kind: "k", TenantID: "t"} }
		if err := queue.ValidatePeriodic([]queue.PeriodicJob{{Name: "tz", Schedule: "CRON_TZ=UTC", Params: params}}); !errors.Is(err, queue.ErrInvalid) {
			t.Errorf("ValidatePeriodic with schedule CRON_TZ=UTC: %v, want ErrInvalid", err)
		}
	}()
}
