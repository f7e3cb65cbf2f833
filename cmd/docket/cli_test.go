package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/internal/storepair"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/queue/sqlite"
)

// runCLI runs docket with args on the data dir and returns its exit
// status and output.
func runCLI(t *testing.T, dataDir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut syncBuffer
	err := run(ctx, args, env(map[string]string{"DOCKET_DATA_DIR": dataDir}), &out, &errOut)
	return exitCode(err), out.String(), errOut.String()
}

// commandTree walks the command tree from `docket --help`: every command,
// and every subcommand its own --help lists.
func commandTree(t *testing.T, dataDir string) [][]string {
	t.Helper()
	code, top, _ := runCLI(t, dataDir, "--help")
	if code != 0 || !strings.Contains(top, "usage: docket <command>") {
		t.Fatalf("docket --help: exit %d:\n%s", code, top)
	}
	_, list, _ := strings.Cut(top, "commands:")
	var tree [][]string
	for _, m := range usageCmd.FindAllStringSubmatch(list, -1) {
		cmd := m[1]
		code, out, errOut := runCLI(t, dataDir, cmd, "--help")
		if code != 0 {
			t.Errorf("docket %s --help: exit %d\n%s%s", cmd, code, out, errOut)
			continue
		}
		subs := usageCmd.FindAllStringSubmatch(out, -1) // a group prints its subcommands on stdout
		if len(subs) == 0 {
			tree = append(tree, []string{cmd})
			continue
		}
		for _, s := range subs {
			tree = append(tree, []string{cmd, s[1]})
		}
	}
	return tree
}

// TestCLI_HelpEverywhere: -h and --help on every command and subcommand
// exit 0 and print its usage (its name and flags); on a command with
// subcommands they print the list of them on standard output.
func TestCLI_HelpEverywhere(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	tree := commandTree(t, dataDir)
	for _, want := range [][]string{{"serve"}, {"tenants", "update"}, {"tenants", "revoke-key"}, {"jobs", "show"}, {"queue", "health"}} {
		if !slices.ContainsFunc(tree, func(c []string) bool { return slices.Equal(c, want) }) {
			t.Errorf("the walk did not reach %q: %q", want, tree)
		}
	}
	for _, cmd := range tree {
		for _, h := range []string{"-h", "--help"} {
			code, out, errOut := runCLI(t, dataDir, append(slices.Clone(cmd), h)...)
			text := out + errOut
			name := strings.Join(cmd, " ")
			if code != 0 {
				t.Errorf("docket %s %s: exit %d, want 0\n%s", name, h, code, text)
			}
			if !strings.Contains(strings.ToLower(text), "usage") || !strings.Contains(text, name) || !strings.Contains(text, "  -") {
				t.Errorf("docket %s %s printed no usage with flags:\n%s", name, h, text)
			}
		}
	}
	for _, group := range []string{"tenants", "jobs", "queue"} {
		if code, _, _ := runCLI(t, dataDir, group); code != 1 {
			t.Errorf("docket %s without a subcommand: exit %d, want 1 (usage)", group, code)
		}
		if code, _, _ := runCLI(t, dataDir, group, "no-such"); code != 1 {
			t.Errorf("docket %s no-such: exit %d, want 1", group, code)
		}
	}
}

// cliFixture is a data dir whose store holds a tenant "acme" with a key,
// and jobs: 1 failed after a retry, 2 pending, 3 failed.
type cliFixture struct {
	dir, tenantID, keyID string
}

func newCLIFixture(t *testing.T) *cliFixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	dRaw, err := sqlite.Open(ctx, filepath.Join(dir, "docket.db"))
	if err != nil {
		t.Fatal(err)
	}
	d := storepair.NewSQLite(dRaw)
	defer d.Close()
	if err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	c := queue.NewClient(d, queue.ClientConfig{})
	tn, key, err := docket.Provision(ctx, d, c, docket.TenantCreateParams{Name: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := c.Enqueue(ctx, &queue.EnqueueParams{Queue: "q", Kind: "k", TenantID: tn.ID, MaxAttempts: 2}); err != nil {
			t.Fatal(err)
		}
	}
	finish := func(outcome queue.Outcome, msg string) {
		t.Helper()
		jobs, _, err := d.Executor().JobClaim(ctx, &driver.JobClaimParams{Queue: "q", WorkerID: "w-" + string(outcome), Max: 1, LeaseDuration: time.Hour})
		if err != nil || len(jobs) != 1 {
			t.Fatalf("claim: %v %v", jobs, err)
		}
		if _, err := d.Executor().JobFinish(ctx, []*driver.JobFinishParams{{Lease: jobs[0].Lease(), Outcome: outcome, Error: msg, WorkerID: jobs[0].WorkerID}}); err != nil {
			t.Fatal(err)
		}
	}
	finish(queue.OutcomeRetry, "first try failed") // job 1, attempt 1
	finish(queue.OutcomeFailed, "second try failed")
	return &cliFixture{dir: dir, tenantID: tn.ID, keyID: key.ID}
}

// jsonTestedElsewhere are the commands with --json that need more than a
// store, and the test that runs them.
var jsonTestedElsewhere = map[string]string{
	"load": "TestLoad_AgainstServe (it drives a running server)",
}

// TestCLI_JSONEverywhere: every subcommand that has --json prints valid
// JSON with it, and every command that lists or shows has --json.
func TestCLI_JSONEverywhere(t *testing.T) {
	t.Parallel()
	f := newCLIFixture(t)
	// In order: revoke-key revokes the key, cancel cancels job 2 before
	// retry and discard use it.
	runs := [][]string{
		{"tenants", "list"}, {"tenants", "show", f.tenantID}, {"tenants", "update", f.tenantID, "--plan", "pro"},
		{"tenants", "create", "--name", "globex"}, {"tenants", "key", f.tenantID}, {"tenants", "revoke-key", f.tenantID, f.keyID},
		{"jobs", "list"}, {"jobs", "show", "1"}, {"jobs", "get", "1"}, {"jobs", "cancel", "2"}, {"jobs", "retry", "2"},
		{"jobs", "discard", "3"}, {"queue", "health"}, {"periodic", "list"},
		{"tenants", "pause", f.tenantID}, {"tenants", "resume", f.tenantID}, {"queue", "pause", "dispatch"}, {"queue", "resume", "dispatch"},
		{"queue", "pause", "dispatch"}, {"queue", "resume", "dispatch"}, {"tenants", "pause", f.tenantID}, {"tenants", "resume", f.tenantID},
		{"tenants", "delete", f.tenantID}, // last of the tenant's
		{"bench", "--scenario", "drain", "--jobs", "20", "--tenants", "2", "--workers", "4"},
	}
	tree := commandTree(t, f.dir)
	for _, cmd := range tree {
		_, out, errOut := runCLI(t, f.dir, append(slices.Clone(cmd), "-h")...)
		hasJSON := strings.Contains(out+errOut, "\n  -json")
		if listing := slices.Contains([]string{"list", "show", "get", "health"}, cmd[len(cmd)-1]); listing && !hasJSON {
			t.Errorf("docket %s lists but has no --json", strings.Join(cmd, " "))
		}
		if _, ok := jsonTestedElsewhere[cmd[0]]; hasJSON && !ok && !slices.ContainsFunc(runs, func(r []string) bool { return isPrefix(cmd, r) }) {
			t.Errorf("docket %s has --json: add it to this test's runs", strings.Join(cmd, " "))
		}
	}
	for _, args := range runs {
		if !slices.ContainsFunc(tree, func(c []string) bool { return isPrefix(c, args) }) {
			continue // a command this build does not have yet
		}
		code, out, errOut := runCLI(t, f.dir, append(slices.Clone(args), "--json")...)
		if code != 0 {
			t.Errorf("docket %s --json: exit %d\n%s", strings.Join(args, " "), code, errOut)
			continue
		}
		dec := json.NewDecoder(strings.NewReader(out))
		n := 0
		for ; ; n++ {
			var v map[string]any
			err := dec.Decode(&v)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Errorf("docket %s --json printed invalid JSON (%v):\n%s", strings.Join(args, " "), err, out)
				break
			}
		}
		if n == 0 {
			t.Errorf("docket %s --json printed nothing", strings.Join(args, " "))
		}
	}
}

// isPrefix says whether cmd is where args begin.
func isPrefix(cmd, args []string) bool {
	return len(args) >= len(cmd) && slices.Equal(args[:len(cmd)], cmd)
}
