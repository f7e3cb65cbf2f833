package queue_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The most modules an application that uses the engine and one driver may
// pull into its build list (go list -m all). Each driver is a module of its
// own, and the engine's tests against the real databases live in another
// (queue/enginetest), so the engine's go.mod names neither database library:
// an application gets the engine's two requirements and its one driver's.
//
// With SQLite: 29 now, of which 24 are the embedded SQLite's own
// (modernc.org/sqlite and the C toolchain modules the go.mod files of it and
// its libc name). With PostgreSQL: 19 now, pgx and the modules its go.mod
// names (testify among them) included. The document service's dependencies
// (HTTP, PDF, blob storage, telemetry: some 260 modules) are none of them.
var maxConsumerModules = map[string]int{"sqlite": 30, "postgres": 20}

// TestEngineModule_BuildList builds the module list of a throwaway
// application that imports the engine and one driver, for each driver, as a
// consumer of the released modules would (this directory and the drivers'
// standing in for the release), and fails when it grows past
// maxConsumerModules: the engine must not drag the document service's
// dependencies along, nor one driver's database library into an application
// of the other. It reads go.mod files through the module proxy when the
// module cache lacks them.
func TestEngineModule_BuildList(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the go command")
	}
	engine, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, drv := range []string{"sqlite", "postgres"} {
		t.Run(drv, func(t *testing.T) {
			t.Parallel()
			n, mods := consumerModules(t, engine, drv)
			if limit := maxConsumerModules[drv]; n > limit {
				t.Errorf("an application of the engine and its %s driver has %d modules in its build list, at most %d allowed:\n%s",
					drv, n, limit, strings.Join(mods, "\n"))
			} else {
				t.Logf("an application of the engine and its %s driver has %d modules in its build list", drv, n)
			}
		})
	}
}

// consumerModules writes an application that imports the engine and the
// driver drv (the package queue/drv) into a temporary directory, tidies it
// and returns the modules of its build list, the application aside.
func consumerModules(t *testing.T, engine, drv string) (int, []string) {
	t.Helper()
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	driverMod := "github.com/docketq/docket/queue/" + drv
	write("go.mod", "module example.com/consumer\n\ngo 1.26.0\n\n"+
		"require (\n\tgithub.com/docketq/docket/queue v0.0.0\n\t"+driverMod+" v0.0.0\n)\n\n"+
		"replace (\n\tgithub.com/docketq/docket/queue => "+engine+"\n\t"+
		driverMod+" => "+filepath.Join(engine, drv)+"\n)\n")
	write("main.go", `package main

import (
	"github.com/docketq/docket/queue"
	"`+driverMod+`"
)

var _ = queue.NewClient
var _ = `+drv+`.Open

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
	return len(mods) - 1, mods[1:]
}
