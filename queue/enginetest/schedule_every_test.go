package queue_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// ParseSchedule took any "@every" period robfig/cron's parser took, and
// that parser rounds: "@every -1h" and "@every 0s" ran every second, as
// did "@every 500ms", and "@every 1.5s" every second, not every second and
// a half. A periodic job so defined was enqueued thousands of times an
// hour more than asked, without a word. docs/periodic.md says the period is
// whole seconds, at least one: now anything else is ErrInvalid.
func TestParseSchedule_EveryNotWholeSeconds(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"@every -1h", "@every 0s", "@every 500ms", "@every 1.5s", "CRON_TZ=Europe/Paris @every -5m"} {
		s, err := queue.ParseSchedule(spec)
		if !errors.Is(err, queue.ErrInvalid) || !strings.Contains(err.Error(), "whole number of seconds") {
			msg := "nil"
			if err != nil {
				msg = err.Error()
			}
			if s != nil {
				now := time.Now()
				msg += ", ticking every " + s.Next(s.Next(now)).Sub(s.Next(now)).String()
			}
			t.Errorf("ParseSchedule(%q): %s; want ErrInvalid saying the period must be a whole number of seconds", spec, msg)
		}
	}
	for _, spec := range []string{"@every 1s", "@every 90s", "@every 1h30m", "CRON_TZ=Europe/Paris @every 5m"} {
		if _, err := queue.ParseSchedule(spec); err != nil {
			t.Errorf("ParseSchedule(%q): %v", spec, err)
		}
	}
}
