package testreport

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"
)

// Budgets are the most time each package's tests may take: a package's
// own line, else Default.
type Budgets struct {
	Default  time.Duration
	Packages map[string]time.Duration
}

// ParseBudgets reads budgets, one per line: an import path (or "default")
// and a duration, separated by spaces. Blank lines and lines starting with
// # are ignored.
func ParseBudgets(r io.Reader) (Budgets, error) {
	b := Budgets{Packages: map[string]time.Duration{}}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return b, fmt.Errorf("budgets line %d: want \"package duration\", got %q", n, line)
		}
		d, err := time.ParseDuration(fields[1])
		if err != nil || d <= 0 {
			return b, fmt.Errorf("budgets line %d: %q is not a positive duration", n, fields[1])
		}
		if fields[0] == "default" {
			b.Default = d
		} else {
			b.Packages[fields[0]] = d
		}
	}
	if err := sc.Err(); err != nil {
		return b, err
	}
	if b.Default == 0 {
		return b, fmt.Errorf("budgets: no default line")
	}
	return b, nil
}

// For returns pkg's budget.
func (b Budgets) For(pkg string) time.Duration {
	if d, ok := b.Packages[pkg]; ok {
		return d
	}
	return b.Default
}

// Over returns a line for every package of s that ran past its budget.
func (b Budgets) Over(s *Summary) []string {
	var over []string
	for _, p := range s.Packages {
		if limit := b.For(p.Name); p.Elapsed > limit {
			over = append(over, fmt.Sprintf("%s took %.1fs, over its budget of %s", p.Name, p.Elapsed.Seconds(), limit))
		}
	}
	return over
}
