package main

import (
	"flag"
	"fmt"
	"time"
)

// envFlags registers flags whose defaults come from environment variables
// when those are set; a value that does not parse is an error once the
// flags are parsed (err).
type envFlags struct {
	fs     *flag.FlagSet
	getenv func(string) string
	errs   []error
}

// set applies the environment variable env to the flag name, if set.
func (e *envFlags) set(name, env string) {
	if v := e.getenv(env); v != "" {
		if err := e.fs.Set(name, v); err != nil {
			e.errs = append(e.errs, fmt.Errorf("%s=%q: %w", env, v, err))
		}
	}
}

func (e *envFlags) intVar(p *int, name, env string, def int, usage string) {
	e.fs.IntVar(p, name, def, usage+" ["+env+"]")
	e.set(name, env)
}

func (e *envFlags) durationVar(p *time.Duration, name, env string, def time.Duration, usage string) {
	e.fs.DurationVar(p, name, def, usage+" ["+env+"]")
	e.set(name, env)
}

// err returns the first environment variable that did not parse.
func (e *envFlags) err() error {
	if len(e.errs) > 0 {
		return e.errs[0]
	}
	return nil
}
