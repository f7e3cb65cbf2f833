package queue

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func TestParseSchedule(t *testing.T) {
	t.Parallel()
	from := "2026-03-10T10:17:30.25Z" // a Tuesday
	for _, tc := range []struct {
		spec string
		next []string // the ticks after from, in order
	}{
		{"*/15 * * * *", []string{"2026-03-10T10:30:00Z", "2026-03-10T10:45:00Z"}},
		{"* * * * * *", []string{"2026-03-10T10:17:31Z", "2026-03-10T10:17:32Z"}},
		{"*/20 * * * * *", []string{"2026-03-10T10:17:40Z", "2026-03-10T10:18:00Z"}},
		{"0 9 * * 1-5", []string{"2026-03-11T09:00:00Z", "2026-03-12T09:00:00Z"}},
		{"@hourly", []string{"2026-03-10T11:00:00Z", "2026-03-10T12:00:00Z"}},
		{"@daily", []string{"2026-03-11T00:00:00Z"}},
		{"@every 1s", []string{"2026-03-10T10:17:31Z", "2026-03-10T10:17:32Z"}},
		{"@every 1m30s", []string{"2026-03-10T10:19:00Z", "2026-03-10T10:20:30Z"}},
		// Read in UTC unless the spec names a zone: 09:00 in New York is
		// 13:00 UTC in March after the DST change (8 March 2026).
		{"CRON_TZ=America/New_York 0 9 * * *", []string{"2026-03-10T13:00:00Z", "2026-03-11T13:00:00Z"}},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			s, err := ParseSchedule(tc.spec)
			if err != nil {
				t.Fatalf("ParseSchedule: %v", err)
			}
			at := mustTime(t, from)
			for _, want := range tc.next {
				at = s.Next(at)
				if !at.Equal(mustTime(t, want)) {
					t.Fatalf("next tick %s, want %s", at.UTC().Format(time.RFC3339), want)
				}
			}
		})
	}
}

func TestParseSchedule_Invalid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ spec, msg string }{
		{"", "empty spec"},
		{"* * *", "expected 5 to 6 fields"},
		{"61 * * * *", "above maximum"},
		{"@every soon", "failed to parse duration"},
		{"@sometimes", "unrecognized descriptor"},
		{"CRON_TZ=Nowhere/Land 0 * * * *", "provided bad location"},
		{"0 0 30 2 *", "never fires"}, // 30 February
	} {
		_, err := ParseSchedule(tc.spec)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("ParseSchedule(%q) = %v, want ErrInvalid saying %q", tc.spec, err, tc.msg)
		}
	}
}

func TestValidatePeriodic(t *testing.T) {
	t.Parallel()
	params := func(time.Time) *EnqueueParams { return &EnqueueParams{Kind: "k", TenantID: "t"} }
	ok := PeriodicJob{Name: "report", Schedule: "@hourly", Params: params}
	if err := ValidatePeriodic([]PeriodicJob{ok, {Name: "nightly.cleanup:v2", Schedule: "0 3 * * *", Params: params}}); err != nil {
		t.Fatalf("valid jobs: %v", err)
	}
	for _, tc := range []struct {
		name string
		jobs []PeriodicJob
		msg  string
	}{
		{"no name", []PeriodicJob{{Schedule: "@hourly", Params: params}}, `periodic job name ""`},
		{"space", []PeriodicJob{{Name: "a b", Schedule: "@hourly", Params: params}}, `name "a b"`},
		{"too long", []PeriodicJob{{Name: strings.Repeat("x", 101), Schedule: "@hourly", Params: params}}, "1-100"},
		{"reserved", []PeriodicJob{{Name: "docket.rescue", Schedule: "@hourly", Params: params}}, "are the engine's"},
		{"twice", []PeriodicJob{ok, ok}, `"report" defined twice`},
		{"no params", []PeriodicJob{{Name: "x", Schedule: "@hourly"}}, "no Params"},
		{"bad spec", []PeriodicJob{{Name: "x", Schedule: "every hour", Params: params}}, `periodic job "x": invalid argument: schedule "every hour"`},
	} {
		err := ValidatePeriodic(tc.jobs)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want ErrInvalid saying %q", tc.name, err, tc.msg)
		}
	}
}

func TestEvery_Next(t *testing.T) {
	t.Parallel()
	at := mustTime(t, "2026-03-10T10:17:30.25Z")
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{500 * time.Millisecond, "2026-03-10T10:17:30.5Z"},
		{100 * time.Millisecond, "2026-03-10T10:17:30.3Z"},
		{time.Second, "2026-03-10T10:17:31Z"},
		{7 * time.Second, "2026-03-10T10:17:37Z"},
	} {
		if got := every(tc.d).Next(at); !got.Equal(mustTime(t, tc.want)) {
			t.Errorf("every(%s).Next = %s, want %s", tc.d, got.Format(time.RFC3339Nano), tc.want)
		}
		// From a tick, the next is exactly one period on.
		if got := every(tc.d).Next(mustTime(t, tc.want)); got.Sub(mustTime(t, tc.want)) != tc.d {
			t.Errorf("every(%s) from a tick: %s later, want the period", tc.d, got.Sub(mustTime(t, tc.want)))
		}
	}
	if s := every(1500 * time.Millisecond).String(); s != "@every 1.5s" {
		t.Errorf("String = %q", s)
	}
}

func TestLatestTick(t *testing.T) {
	t.Parallel()
	sec, err := ParseSchedule("* * * * * *")
	if err != nil {
		t.Fatal(err)
	}
	quarter, err := ParseSchedule("*/15 * * * *")
	if err != nil {
		t.Fatal(err)
	}
	base := mustTime(t, "2026-03-10T10:00:00Z")
	for _, tc := range []struct {
		name       string
		sched      Schedule
		from, now  time.Time
		want       time.Time
		wantMissed int
	}{
		{"due now", sec, base, base, base, 0},
		{"due, next not yet", sec, base, base.Add(999 * time.Millisecond), base, 0},
		{"three late", sec, base, base.Add(3500 * time.Millisecond), base.Add(3 * time.Second), 3},
		{"cron late", quarter, base, base.Add(50 * time.Minute), base.Add(45 * time.Minute), 3},
		{"every late", every(time.Second), base, base.Add(3500 * time.Millisecond), base.Add(3 * time.Second), 3},
		{"every, a year down", every(time.Second), base, base.AddDate(1, 0, 0), base.AddDate(1, 0, 0), int(base.AddDate(1, 0, 0).Sub(base) / time.Second)},
		// Past the walk's bound: re-anchored near now, missed a lower bound.
		{"cron, a year down", sec, base, base.AddDate(1, 0, 0).Add(400 * time.Millisecond), base.AddDate(1, 0, 0), -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, missed := latestTick(tc.sched, tc.from, tc.now)
			if !got.Equal(tc.want) {
				t.Fatalf("tick %s, want %s", got.Format(time.RFC3339Nano), tc.want.Format(time.RFC3339Nano))
			}
			if tc.wantMissed >= 0 && missed != tc.wantMissed {
				t.Fatalf("missed %d, want %d", missed, tc.wantMissed)
			}
			if tc.wantMissed < 0 && missed < maxTickSteps {
				t.Fatalf("missed %d, want at least %d", missed, maxTickSteps)
			}
		})
	}
}
