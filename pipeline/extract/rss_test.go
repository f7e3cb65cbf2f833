package extract_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/internal/race"
	"github.com/docketq/docket/pipeline/extract"
	xt "github.com/docketq/docket/pipeline/extract/extracttest"
)

// TestExtract_BombRSS runs every bomb of the table in a child process of its own (this test
// binary, re-executed) with the production engine settings, and checks the child's peak
// resident set against what the memory budget reckons the parse at (Budget): a parse costs the
// process at most that. Two copies of the worst bombs at once, with a budget for one, cost no
// more than one. The sandbox's tests bound the same bombs by a child's limits
// (pipeline/sandbox). The figures are in docs/security.md.
func TestExtract_BombRSS(t *testing.T) {
	if name := os.Getenv(xt.ChildEnv); name != "" {
		bombChild(t, name, os.Getenv(xt.CopiesEnv) == "2")
		return
	}
	if testing.Short() {
		t.Skip("parses every bomb in a child process")
	}
	if race.Enabled {
		t.Skip("peak RSS under the race detector measures the detector; scripts/test.sh runs this test without -race")
	}
	for _, name := range xt.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkBombRSS(t, name, 1)
		})
	}
	for _, name := range []string{"pdf/flate 14 MB to 2 GiB", "pdf/title 30 MB"} {
		t.Run("two at once/"+name, func(t *testing.T) {
			t.Parallel()
			checkBombRSS(t, name, 2)
		})
	}
}

// checkBombRSS parses copies of the named bomb at once in a child process and bounds its peak.
func checkBombRSS(t *testing.T, name string, copies int) {
	xt.RunChild(t, "TestExtract_BombRSS", name, copies).CheckBound(t)
}

// bombChild parses the named bomb (twice at once with pair, under a budget for one parse) and
// reports its peak RSS, from a peak reset once the input is built: the figure is the parse's
// (the process with its engine, the input, and what parsing it cost).
func bombChild(t *testing.T, name string, pair bool) {
	c, ok := xt.Named(name)
	if !ok {
		t.Fatalf("no bomb %q", name)
	}
	typ := extract.Type(c.Type)
	cost := extract.Cost(typ, int64(len(c.Data)), extract.Options{PDF: engine})
	opts := extract.Options{Timeout: 20 * time.Second, Budget: extract.NewBudget(extract.BudgetConfig{Bytes: cost, Wait: time.Minute})}
	base, err := xt.ResetPeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	n := 1
	if pair {
		n = 2
	}
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := extractBytes(t, typ, c.Data, opts)
			errs <- err
		}()
	}
	reasons := make([]string, n)
	for i := range n {
		reasons[i] = extract.Reason(<-errs)
	}
	peak, err := xt.PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	xt.ChildResult{Peak: peak, Base: base, Cost: cost, Outcome: strings.Join(reasons, ",")}.Report()
}
