package testreport_test

import (
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/internal/testreport"
)

// stream is a go test -json run of two packages: one passes (a test with a
// subtest and a skipped test), the other fails (one test's output must be
// printed, the passing test's not).
const stream = `{"Time":"2026-12-06T10:00:00Z","Action":"run","Package":"a","Test":"TestA"}
{"Time":"2026-12-06T10:00:00Z","Action":"output","Package":"a","Test":"TestA","Output":"quiet\n"}
{"Time":"2026-12-06T10:00:01Z","Action":"pass","Package":"a","Test":"TestA/sub","Elapsed":0.5}
{"Time":"2026-12-06T10:00:01Z","Action":"pass","Package":"a","Test":"TestA","Elapsed":1}
{"Time":"2026-12-06T10:00:01Z","Action":"skip","Package":"a","Test":"TestSkip","Elapsed":0}
{"Time":"2026-12-06T10:00:02Z","Action":"pass","Package":"a","Elapsed":2}
go: downloading something
{"Time":"2026-12-06T10:00:02Z","Action":"output","Package":"b","Test":"TestB","Output":"boom: want 1\n"}
{"Time":"2026-12-06T10:00:05Z","Action":"fail","Package":"b","Test":"TestB","Elapsed":3}
{"Time":"2026-12-06T10:00:03Z","Action":"pass","Package":"b","Test":"TestFast","Elapsed":0.1}
{"Time":"2026-12-06T10:00:05Z","Action":"output","Package":"b","Output":"FAIL\n"}
{"Time":"2026-12-06T10:00:05Z","Action":"fail","Package":"b","Elapsed":65}
`

func TestRead(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	s, err := testreport.Read(strings.NewReader(stream), &out, testreport.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ok   a 2.0s", "go: downloading something", "--- FAIL: TestB (b)\nboom: want 1", "FAIL b 65.0s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "quiet") {
		t.Errorf("a passing test's output printed:\n%s", out.String())
	}
	if pass, fail, skip := s.Counts(); pass != 3 || fail != 1 || skip != 1 {
		t.Errorf("counts %d passed, %d failed, %d skipped; want 3, 1, 1", pass, fail, skip)
	}
	if top := s.Slowest(2); len(top) != 2 || top[0].Name != "TestB" || top[1].Name != "TestA/sub" {
		t.Errorf("slowest %+v; want TestB, TestA/sub (tests with subtests left out)", top)
	}
	if w := s.Wall(); w != 5*time.Second {
		t.Errorf("wall %s, want 5s", w)
	}
	var merged testreport.Summary
	merged.Merge(s)
	merged.Merge(s)
	if w := merged.Wall(); w != 10*time.Second {
		t.Errorf("wall of two streams merged %s, want 10s", w)
	}
}

func TestRead_Verbose(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	if _, err := testreport.Read(strings.NewReader(stream), &out, testreport.Config{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "quiet") {
		t.Errorf("verbose output lacks a passing test's output:\n%s", out.String())
	}
}

func TestBudgets(t *testing.T) {
	t.Parallel()
	b, err := testreport.ParseBudgets(strings.NewReader("# comment\n\ndefault 1m\nb 2m\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := testreport.Read(strings.NewReader(stream), &strings.Builder{}, testreport.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if over := b.Over(s); len(over) != 0 {
		t.Errorf("over budget: %q; want none (b has 2m)", over)
	}
	b.Packages["b"] = time.Minute
	if over := b.Over(s); len(over) != 1 || !strings.Contains(over[0], "b took 65.0s, over its budget of 1m0s") {
		t.Errorf("over budget: %q; want b", over)
	}
	for _, bad := range []string{"", "b 1m\n", "default\n", "default soon\n", "default -1s\n", "default 1m extra\n"} {
		if _, err := testreport.ParseBudgets(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseBudgets(%q) succeeded", bad)
		}
	}
}
