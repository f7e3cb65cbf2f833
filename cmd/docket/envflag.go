package main

import (
	"flag"
	"fmt"
	"time"
)

// envFlags registers flags that each have an environment variable: the
// variable, when set, gives the flag its value (and the default that -h
// shows); a value that does not parse is an error once the flags are
// parsed (err). Every flag of every command is registered this way or, for
// a string, with the variable's value as its default: TestFlags_Env checks.
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
			return
		}
		e.fs.Lookup(name).DefValue = v
	}
}

func (e *envFlags) stringVar(p *string, name, env, def, usage string) {
	e.fs.StringVar(p, name, def, usage+" ["+env+"]")
	e.set(name, env)
}

func (e *envFlags) boolVar(p *bool, name, env string, def bool, usage string) {
	e.fs.BoolVar(p, name, def, usage+" ["+env+"]")
	e.set(name, env)
}

func (e *envFlags) intVar(p *int, name, env string, def int, usage string) {
	e.fs.IntVar(p, name, def, usage+" ["+env+"]")
	e.set(name, env)
}

func (e *envFlags) int64Var(p *int64, name, env string, def int64, usage string) {
	e.fs.Int64Var(p, name, def, usage+" ["+env+"]")
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
