package main

import (
	"flag"
	"fmt"

	"github.com/docketq/docket/pipeline/extract"
)

// parseMemoryFlag registers --parse-memory-bytes, the memory budget every
// document parse of this process is admitted against (extract.Budget), and
// returns a function that, once fs is parsed, returns the parser options it
// sets, or the error of a bad value.
//
//nolint:unused // to be wired into serviceFlags (issue 10, item 2)
func parseMemoryFlag(fs *flag.FlagSet, getenv func(string) string) func() (extract.Options, error) {
	const name, env = "parse-memory-bytes", "DOCKET_PARSE_MEMORY_BYTES"
	bytes := fs.Int64(name, extract.DefaultMemoryBudget,
		"memory the document parses of this process may hold at once, each reckoned at its worst case "+
			"(a PDF at about 640 MiB); a parse waits for its share, and after a minute its job runs again later ["+env+"]")
	var envErr error
	if v := getenv(env); v != "" {
		if err := fs.Set(name, v); err != nil {
			envErr = fmt.Errorf("%s=%q: %w", env, v, err)
		}
	}
	return func() (extract.Options, error) {
		switch {
		case envErr != nil:
			return extract.Options{}, envErr
		case *bytes < 1<<20:
			return extract.Options{}, fmt.Errorf("--%s %d: want at least 1 MiB", name, *bytes)
		}
		return extract.Options{Budget: extract.NewBudget(extract.BudgetConfig{Bytes: *bytes})}, nil
	}
}
