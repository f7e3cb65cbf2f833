// Package testreport reads the event stream of `go test -json` and turns it
// into what a person wants at the end of a run: one line per package, the
// output of every failed test, the slowest tests, and a check of each
// package's run time against its budget.
//
// scripts/test.sh pipes go test through it (cmd/testreport), so that the
// suite cannot quietly grow slower: a package that runs past its budget
// fails the run, naming the package, its time and its budget.
package testreport

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Event is one line of `go test -json` (see `go doc test2json`).
type Event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64 // seconds
	Output  string
}

// Test is one finished test.
type Test struct {
	Package string
	Name    string
	Elapsed time.Duration
	Action  string // pass, fail or skip
}

// Package is one finished test binary (or a package that failed to build).
type Package struct {
	Name    string
	Elapsed time.Duration
	Action  string // pass, fail or skip
}

// Summary is what a run produced.
type Summary struct {
	Packages []Package
	Tests    []Test // top-level tests and subtests, in the order they ended
	Failed   []Test

	wall        time.Duration // of the streams merged in
	first, last time.Time     // of this stream's events
}

// Wall returns the time from the first event to the last, summed over the
// streams merged in.
func (s *Summary) Wall() time.Duration { return s.wall + s.last.Sub(s.first) }

// Merge adds the results of another stream, run after this one, to s.
func (s *Summary) Merge(o *Summary) {
	s.Packages = append(s.Packages, o.Packages...)
	s.Tests = append(s.Tests, o.Tests...)
	s.Failed = append(s.Failed, o.Failed...)
	s.wall += o.Wall()
}

// Counts returns how many tests (subtests included) passed, failed and
// were skipped.
func (s *Summary) Counts() (pass, fail, skip int) {
	for _, t := range s.Tests {
		switch t.Action {
		case "pass":
			pass++
		case "fail":
			fail++
		case "skip":
			skip++
		}
	}
	return pass, fail, skip
}

// Slowest returns the n slowest tests that have no subtests, slowest
// first. A test with subtests is left out: its time runs until its last
// subtest ends, and a parallel subtest can wait long for a slot after
// its parent's function returned, so a parent's time says more of the
// load than of the test. (A parallel test's own time leaves out its wait
// for a slot: the testing package counts it so.)
func (s *Summary) Slowest(n int) []Test {
	parents := map[string]bool{}
	for _, t := range s.Tests {
		for name := t.Name; ; {
			i := strings.LastIndexByte(name, '/')
			if i < 0 {
				break
			}
			name = name[:i]
			parents[t.Package+"\x00"+name] = true
		}
	}
	var leaves []Test
	for _, t := range s.Tests {
		if !parents[t.Package+"\x00"+t.Name] {
			leaves = append(leaves, t)
		}
	}
	slices.SortStableFunc(leaves, func(a, b Test) int { return cmp.Compare(b.Elapsed, a.Elapsed) })
	return leaves[:min(n, len(leaves))]
}

// Config says what Read prints as it goes.
type Config struct {
	// Verbose prints every output line of every test (go test -v), not
	// only the output of failed tests.
	Verbose bool
}

// Read consumes a `go test -json` stream from r, printing to w a line per
// finished package and the whole output of each failed test (or, with
// Verbose, all output) as the stream goes, and returns the summary. Lines
// that are not JSON (go's own messages) are printed as they are.
func Read(r io.Reader, w io.Writer, cfg Config) (*Summary, error) {
	s := &Summary{}
	output := map[string][]string{} // package + test -> its output so far
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var ev Event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		if !ev.Time.IsZero() {
			if s.first.IsZero() {
				s.first = ev.Time
			}
			s.last = ev.Time
		}
		key := ev.Package + "\x00" + ev.Test
		switch ev.Action {
		case "output", "build-output":
			if cfg.Verbose {
				fmt.Fprint(w, ev.Output)
			} else {
				output[key] = append(output[key], ev.Output)
			}
		case "pass", "fail", "skip":
			elapsed := time.Duration(ev.Elapsed * float64(time.Second))
			if ev.Test == "" {
				s.Packages = append(s.Packages, Package{ev.Package, elapsed, ev.Action})
				printPackage(w, ev, elapsed, output[key], cfg.Verbose)
			} else {
				t := Test{ev.Package, ev.Test, elapsed, ev.Action}
				s.Tests = append(s.Tests, t)
				if ev.Action == "fail" {
					s.Failed = append(s.Failed, t)
					if !cfg.Verbose {
						fmt.Fprintf(w, "--- FAIL: %s (%s)\n%s", ev.Test, ev.Package, strings.Join(output[key], ""))
					}
				}
			}
			delete(output, key)
		}
	}
	return s, sc.Err()
}

// printPackage prints a finished package's line; for a failed package, the
// output that belongs to no test (a panic, a TestMain error, a build
// failure) comes first.
func printPackage(w io.Writer, ev Event, elapsed time.Duration, out []string, verbose bool) {
	if ev.Action == "fail" && !verbose {
		fmt.Fprint(w, strings.Join(out, ""))
	}
	fmt.Fprintf(w, "%-4s %s %.1fs\n", map[string]string{"pass": "ok", "fail": "FAIL", "skip": "?"}[ev.Action],
		ev.Package, elapsed.Seconds())
}
