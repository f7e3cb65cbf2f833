package queue

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/docketq/docket/queue/driver"
)

// PeriodicJob is a job enqueued on a schedule: once per tick across every
// worker process that shares the store. The worker elected to run
// maintenance enqueues it; the tick is recorded in the store in the same
// transaction as the job, with a compare-and-set on the tick, so a tick is
// enqueued once even when leadership changes in the middle of it. See
// docs/periodic.md.
//
// Define the same periodic jobs in every worker: only the leader's
// definitions run.
type PeriodicJob struct {
	// Name identifies the job across processes and restarts: 1-100 of
	// [A-Za-z0-9_.:/-], starting with a letter or digit. Names starting
	// with "docket." are the engine's own.
	Name string
	// Schedule is a cron spec: five fields (minute hour day-of-month month
	// day-of-week), or six with seconds first, or a descriptor such as
	// "@hourly", "@daily" or "@every 10m". Specs are read in UTC unless
	// prefixed with CRON_TZ=Area/City.
	Schedule string
	// Params returns the job to enqueue for the tick (a time the schedule
	// names, not the time the job is enqueued). It is called by the leader
	// only, once per tick it enqueues, and must not block.
	Params func(tick time.Time) *EnqueueParams
}

// Schedule tells the ticks of a periodic job.
type Schedule interface {
	// Next returns the first tick strictly after t, or the zero time when
	// there is none.
	Next(t time.Time) time.Time
}

// cronParser reads five fields, or six with seconds first, and the
// descriptors (@hourly, @every 10m).
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom |
	cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule parses a cron spec with robfig/cron's parser (five fields,
// or six with seconds first, or a descriptor such as "@every 1m"). Specs
// without a CRON_TZ= prefix are read in UTC, so every process computes the
// same ticks whatever its local time zone. A spec that never fires is
// invalid, and so is an "@every" period that is not a whole number of
// seconds, at least one.
func ParseSchedule(spec string) (Schedule, error) {
	if hasTZ(spec) && !strings.Contains(spec, " ") {
		// robfig/cron v3.0.1 slices the zone up to the first space and
		// panics without one (TestParseSchedule_TimeZoneAlone).
		return nil, fmt.Errorf("%w: schedule %q: a time zone and no schedule", ErrInvalid, spec)
	}
	s, err := cronParser.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("%w: schedule %q: %w", ErrInvalid, spec, err)
	}
	var sched Schedule = s
	switch s := s.(type) {
	case *cron.SpecSchedule:
		if !hasTZ(spec) {
			s.Location = time.UTC
		}
	case cron.ConstantDelaySchedule:
		// The parser rounds the period to whole seconds, at least one:
		// "@every -1h" and "@every 500ms" would tick every second.
		_, period, _ := strings.Cut(spec, "@every ")
		if d, err := time.ParseDuration(strings.TrimSpace(period)); err != nil || d != s.Delay {
			return nil, fmt.Errorf("%w: schedule %q: the period must be a whole number of seconds, at least one", ErrInvalid, spec)
		}
		sched = every(s.Delay)
	}
	if sched.Next(time.Now()).IsZero() {
		return nil, fmt.Errorf("%w: schedule %q never fires", ErrInvalid, spec)
	}
	return sched, nil
}

func hasTZ(spec string) bool {
	return strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=")
}

// every ticks at a fixed period. Its first tick after a time t is on the
// grid of the period (or of whole seconds, for periods of a second or
// more); later ticks follow the previous one by exactly the period, so the
// chain the store records is the same in every process.
type every time.Duration

// Next returns the first tick after t.
func (e every) Next(t time.Time) time.Time {
	d := time.Duration(e)
	return t.Truncate(min(d, time.Second)).Add(d)
}

// String is the spec shown for the tick chain: "@every 500ms".
func (e every) String() string { return "@every " + time.Duration(e).String() }

var periodicNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,99}$`)

// reservedPrefix starts the names of the engine's own periodic tasks.
const reservedPrefix = "docket."

// ValidatePeriodic checks periodic job definitions: valid and distinct
// names, schedules that parse and fire, and a Params function. Errors wrap
// ErrInvalid.
func ValidatePeriodic(jobs []PeriodicJob) error {
	_, err := periodicTasks(jobs)
	return err
}

// periodicTask is one entry the leader runs: a user's periodic job or one
// of the maintenance sweeps.
type periodicTask struct {
	name  string
	spec  string
	sched Schedule
	// exact: the tick is recorded in the same transaction as run's writes,
	// so it happens exactly once. Otherwise the tick is recorded first and
	// run runs after (at most once per tick: for idempotent sweeps).
	exact bool
	// job is the user's definition; nil for the engine's own tasks.
	job *PeriodicJob
	// run does the tick's work with x. The worker fills it in for jobs.
	run func(ctx context.Context, x driver.Executor, tick time.Time) (after func(), err error)
}

// periodicTasks validates jobs and returns their tasks.
func periodicTasks(jobs []PeriodicJob) ([]*periodicTask, error) {
	seen := make(map[string]bool, len(jobs))
	tasks := make([]*periodicTask, 0, len(jobs))
	for _, j := range jobs {
		switch {
		case !periodicNameRE.MatchString(j.Name):
			return nil, fmt.Errorf("%w: periodic job name %q: want 1-100 of [A-Za-z0-9_.:/-], starting with a letter or digit", ErrInvalid, j.Name)
		case strings.HasPrefix(j.Name, reservedPrefix):
			return nil, fmt.Errorf("%w: periodic job name %q: names starting with %q are the engine's", ErrInvalid, j.Name, reservedPrefix)
		case seen[j.Name]:
			return nil, fmt.Errorf("%w: periodic job name %q defined twice", ErrInvalid, j.Name)
		case j.Params == nil:
			return nil, fmt.Errorf("%w: periodic job %q has no Params function", ErrInvalid, j.Name)
		}
		seen[j.Name] = true
		sched, err := ParseSchedule(j.Schedule)
		if err != nil {
			return nil, fmt.Errorf("periodic job %q: %w", j.Name, err)
		}
		tasks = append(tasks, &periodicTask{name: j.Name, spec: j.Schedule, sched: sched, exact: true, job: &j})
	}
	return tasks, nil
}

// latestTick returns the latest tick of sched at or before now, starting
// from the due tick from, and how many ticks before it it passes over (the
// ticks missed: see docs/periodic.md). from must not be after now.
func latestTick(sched Schedule, from, now time.Time) (time.Time, int) {
	if e, ok := sched.(every); ok {
		n := int(now.Sub(from) / time.Duration(e))
		return from.Add(time.Duration(n) * time.Duration(e)), n
	}
	t, missed := from, 0
	for range maxTickSteps {
		n := sched.Next(t)
		if n.IsZero() || n.After(now) {
			return t, missed
		}
		t, missed = n, missed+1
	}
	// A long gap (a frequent schedule not run for a long while): restart
	// the walk from a tick near now. Cron ticks are on a fixed calendar
	// grid, so any start lands on it. missed is then a lower bound.
	for back := time.Minute; back < 200*365*24*time.Hour; back *= 2 {
		if c := sched.Next(now.Add(-back)); !c.IsZero() && !c.After(now) {
			t2, m := latestTick(sched, c, now)
			return t2, missed + m
		}
	}
	return t, missed
}

// maxTickSteps bounds the walk over missed ticks.
const maxTickSteps = 10000
