package queue_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxConsumerModules bounds what an application that uses only the engine
// and its SQLite driver pulls into its build list (go list -m all): 33 now,
// of which 24 are the embedded SQLite's own (modernc.org/sqlite and the C
// toolchain modules its go.mod names) and 4 the PostgreSQL driver's (pgx),
// listed by the engine's go.mod. The document service's dependencies (HTTP,
// PDF, blob storage, telemetry: some 260 modules) are none of them.
const maxConsumerModules = 33

// TestEngineModule_BuildList builds the module list of a throwaway
// application that imports the engine and its SQLite driver, as a consumer of
// the released module would (this directory standing in for the release),
// and fails when it grows past maxConsumerModules: the engine must not
// drag the document service's dependencies along. It reads go.mod files
// through the module proxy when the module cache lacks them.
func TestEngineModule_BuildList(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the go command")
	}
	engine, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/consumer\n\ngo 1.26.0\n\n"+
		"require github.com/docketq/docket/queue v0.0.0\n\n"+
		"replace github.com/docketq/docket/queue => "+engine+"\n")
	write("main.go", `package main

import (
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/sqlite"
)

var _ = queue.NewClient
var _ = sqlite.Open

func main() {}
`)
	gocmd := func(args ...string) string {
		cmd := exec.CommandContext(t.Context(), "go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	gocmd("mod", "tidy")
	mods := strings.Fields(strings.TrimSpace(gocmd("list", "-m", "-f", "{{.Path}}", "all")))
	// The first is the consumer itself.
	if n := len(mods) - 1; n > maxConsumerModules {
		t.Errorf("an engine-only application has %d modules in its build list, at most %d allowed:\n%s",
			n, maxConsumerModules, strings.Join(mods[1:], "\n"))
	} else {
		t.Logf("an engine-only application has %d modules in its build list", n)
	}
}
