package main

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// commands is every command and subcommand, as `docket ... -h` runs them.
var commands = [][]string{
	{"serve"}, {"worker"}, {"migrate"},
	{"tenants", "create"}, {"tenants", "list"}, {"tenants", "show"}, {"tenants", "update"}, {"tenants", "key"}, {"tenants", "revoke-key"},
	{"jobs", "list"}, {"jobs", "show"}, {"jobs", "get"}, {"jobs", "cancel"}, {"jobs", "retry"}, {"jobs", "discard"},
	{"tenants", "pause"}, {"tenants", "resume"}, {"tenants", "delete"},
	{"queue", "health"}, {"queue", "pause"}, {"queue", "resume"},
	{"periodic", "list"},
	{"bench"}, {"load"},
}

// flagDoc is a flag as -h describes it.
type flagDoc struct {
	name, typ, usage string
}

var (
	flagLine = regexp.MustCompile(`^  -(\S+)(?: (\S+))?(?:\t(.*))?$`)
	envName  = regexp.MustCompile(`\[([A-Z][A-Z0-9_]*)\]`)
	usageCmd = regexp.MustCompile(`(?m)^  ([a-z-]+)  `)
)

// helpFlags runs `docket <cmd> -h` with env and returns the flags it lists.
func helpFlags(t *testing.T, cmd []string, vars map[string]string) map[string]*flagDoc {
	t.Helper()
	if vars["DOCKET_DATA_DIR"] == "" {
		vars["DOCKET_DATA_DIR"] = t.TempDir() // -h opens nothing, but in case
	}
	var stdout, stderr syncBuffer
	if err := run(context.Background(), append(slices.Clone(cmd), "-h"), env(vars), &stdout, &stderr); err == nil {
		t.Fatalf("%s -h succeeded", cmd)
	}
	flags := map[string]*flagDoc{}
	var last *flagDoc
	for line := range strings.SplitSeq(stderr.String(), "\n") {
		if m := flagLine.FindStringSubmatch(line); m != nil {
			last = &flagDoc{name: m[1], typ: m[2], usage: m[3]}
			flags[last.name] = last
		} else if last != nil && strings.HasPrefix(line, "    \t") {
			last.usage += " " + strings.TrimPrefix(line, "    \t")
		}
	}
	if len(flags) == 0 {
		t.Fatalf("%s -h listed no flags:\n%s", cmd, stderr.String())
	}
	return flags
}

// TestFlags_Env: every flag of every command names its environment
// variable in -h, and setting that variable sets the flag (-h shows its
// value as the default).
func TestFlags_Env(t *testing.T) {
	t.Parallel()
	// Every command of the usage texts is in commands.
	for _, u := range []struct{ cmd, text string }{{"", usage}, {"tenants", tenantsUsage}, {"jobs", jobsUsage}, {"queue", queueUsage}} {
		for _, m := range usageCmd.FindAllStringSubmatch(u.text, -1) {
			cmd := strings.Fields(u.cmd + " " + m[1])
			if !slices.ContainsFunc(commands, func(c []string) bool { return slices.Equal(c[:min(len(c), len(cmd))], cmd) }) {
				t.Errorf("command %q is not checked", cmd)
			}
		}
	}
	values := map[string]struct{ env, shown string }{
		"":         {"true", "true"},
		"int":      {"7", "7"},
		"duration": {"7s", "7s"},
		"string":   {"env-value", `"env-value"`},
	}
	for _, cmd := range commands {
		vars := map[string]string{}
		want := map[string]string{}
		for _, f := range helpFlags(t, cmd, map[string]string{}) {
			m := envName.FindAllStringSubmatch(f.usage, -1)
			if m == nil {
				t.Errorf("%s --%s: no [ENVIRONMENT_VARIABLE] in its usage %q", cmd, f.name, f.usage)
				continue
			}
			v, ok := values[f.typ]
			if !ok {
				t.Errorf("%s --%s: type %q", cmd, f.name, f.typ)
				continue
			}
			env := m[len(m)-1][1]
			vars[env] = v.env
			want[f.name] = "(default " + v.shown + ")"
		}
		for name, f := range helpFlags(t, cmd, vars) {
			if w := want[name]; w != "" && !strings.HasSuffix(f.usage, w) {
				t.Errorf("%s --%s with its variable set: usage %q, want it to end %q", cmd, name, f.usage, w)
			}
		}
	}
}

// TestFlags_EnvInvalid: a variable that does not parse is an error that
// names it.
func TestFlags_EnvInvalid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		env  string
	}{
		{[]string{"serve"}, "DOCKET_CONCURRENCY"},
		{[]string{"worker"}, "DOCKET_LEASE"},
		{[]string{"tenants", "list"}, "DOCKET_TENANTS_JSON"},
		{[]string{"jobs", "list"}, "DOCKET_JOBS_LIMIT"},
		{[]string{"bench"}, "DOCKET_BENCH_DURATION"},
	} {
		var stdout, stderr syncBuffer
		err := run(context.Background(), tc.args, env(map[string]string{tc.env: "not-a-value", "DOCKET_DATA_DIR": t.TempDir()}), &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), tc.env) {
			t.Errorf("%s with %s=not-a-value: %v, want an error naming the variable", tc.args, tc.env, err)
		}
	}
}
