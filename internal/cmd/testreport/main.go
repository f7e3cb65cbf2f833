// Command testreport reads `go test -json` and reports on it for
// scripts/test.sh.
//
// On standard input it prints a line per package and the output of every
// failed test as the stream goes, keeps the stream (-json FILE), and fails
// when a test failed or a package ran past its budget (-budgets FILE; see
// internal/testreport):
//
//	go test -json ./... 2>&1 | testreport -budgets scripts/test-budgets.txt -json .tmp/test/race.json
//
// With -summary it reads kept streams instead and prints the count of tests,
// the slowest tests and the wall time the streams span:
//
//	testreport -summary .tmp/test/*.json
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/docketq/docket/internal/testreport"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("testreport", flag.ContinueOnError)
	budgetsFile := fs.String("budgets", "", "file of per-package time budgets (package duration per line)")
	jsonFile := fs.String("json", "", "also write the event stream to this file")
	verbose := fs.Bool("v", false, "print every test's output, not only failed tests'")
	summary := fs.Bool("summary", false, "summarise the streams kept in the files named as arguments")
	slowest := fs.Int("slowest", 10, "how many of the slowest tests -summary lists")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *summary {
		return summarise(fs.Args(), stdout, *slowest)
	}
	var budgets *testreport.Budgets
	if *budgetsFile != "" {
		b, err := readBudgets(*budgetsFile)
		if err != nil {
			return err
		}
		budgets = &b
	}
	in := stdin
	if *jsonFile != "" {
		f, err := os.Create(*jsonFile)
		if err != nil {
			return err
		}
		defer f.Close()
		in = io.TeeReader(stdin, f)
	}
	s, err := testreport.Read(in, stdout, testreport.Config{Verbose: *verbose})
	if err != nil {
		return err
	}
	var errs []error
	if len(s.Failed) > 0 {
		errs = append(errs, fmt.Errorf("%d tests failed", len(s.Failed)))
	}
	for _, p := range s.Packages {
		if p.Action == "fail" {
			errs = append(errs, fmt.Errorf("package %s failed", p.Name))
		}
	}
	if budgets != nil {
		for _, line := range budgets.Over(s) {
			errs = append(errs, errors.New(line))
		}
	}
	return errors.Join(errs...)
}

func readBudgets(name string) (testreport.Budgets, error) {
	f, err := os.Open(name)
	if err != nil {
		return testreport.Budgets{}, err
	}
	defer f.Close()
	b, err := testreport.ParseBudgets(f)
	if err != nil {
		return b, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

// summarise prints the count of tests, the n slowest and the wall time of
// the streams kept in files.
func summarise(files []string, w io.Writer, n int) error {
	var all testreport.Summary
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		s, err := testreport.Read(f, io.Discard, testreport.Config{})
		_ = f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		all.Merge(s)
	}
	pass, fail, skip := all.Counts()
	fmt.Fprintf(w, "%d tests passed, %d failed, %d skipped, in %d packages; go test ran for %s\n",
		pass, fail, skip, len(all.Packages), all.Wall().Round(100_000_000))
	if top := all.Slowest(n); len(top) > 0 {
		fmt.Fprintf(w, "The %d slowest tests:\n", len(top))
		for _, t := range top {
			fmt.Fprintf(w, "  %7.1fs  %s %s\n", t.Elapsed.Seconds(), strings.TrimPrefix(t.Package, "github.com/docketq/docket/"), t.Name)
		}
	}
	return nil
}
