// Command docket runs Docket: durable, fair background processing of
// documents on PostgreSQL or an embedded SQLite store.
//
//	docket serve     API, dashboard and workers in one process
//	docket worker    workers only
//	docket migrate   bring the schema up to date
//	docket tenants   create, list, show, update, pause and resume tenants, issue and revoke their keys
//	docket jobs      list, show (with attempt history), cancel, retry and discard jobs
//	docket queue     queue health (the monitoring views), pause and resume
//	docket periodic  list the periodic tasks
//	docket bench     measure the engine
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/docketq/docket/pipeline/sandbox"
)

func main() {
	sandbox.Main() // a document's child process runs here and exits
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	code := exitCode(err)
	if code != 0 && !errors.Is(err, errUsage) {
		fmt.Fprintln(os.Stderr, "docket:", err)
	}
	os.Exit(code)
}

// exitCode is the process's exit status for run's error: 0 for none and
// for -h (the flags were printed as asked), 1 otherwise.
func exitCode(err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 1
}

var errUsage = errors.New("usage")

// parseError is a command's error for a failed fs.Parse: flag.ErrHelp for
// -h (exit 0), errUsage otherwise; the flag package has printed either.
func parseError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return flag.ErrHelp
	}
	return errUsage
}

const usage = `usage: docket <command> [flags]

commands:
  serve     run the API, dashboard and workers in one process
  worker    run workers only
  migrate   bring the database schema up to date
  tenants   create, list, show, update, pause and resume tenants, issue and revoke API keys (also while serve runs)
  jobs      list jobs, show one with its attempt history, cancel, retry and discard jobs
  queue     queue health (jobs per state, performance, stuck and failed jobs, backlog per tenant), pause, resume
  periodic  list the periodic tasks: sweeps and periodic jobs, last and next run
  bench     measure the queue engine (see docket bench -h)
  load      drive a running server through its API as many tenants at once, and report

Run "docket <command> -h" for a command's flags.
`

// run is main without the process: arguments, environment and output are
// passed in, so tests can run the whole program.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	cmd, rest := args[0], args[1:]
	if u, ok := groupHelp(cmd, rest); ok { // docket tenants --help
		fmt.Fprint(stdout, u)
		return nil
	}
	switch cmd {
	case "serve":
		return runServe(ctx, rest, getenv, stdout, stderr)
	case "worker":
		return runWorker(ctx, rest, getenv, stdout, stderr)
	case "migrate":
		return runMigrate(ctx, rest, getenv, stdout, stderr)
	case "tenants":
		return runTenants(ctx, rest, getenv, stdout, stderr)
	case "jobs":
		return runJobs(ctx, rest, getenv, stdout, stderr)
	case "queue":
		return runQueue(ctx, rest, getenv, stdout, stderr)
	case "periodic":
		return runPeriodic(ctx, rest, getenv, stdout, stderr)
	case "bench":
		return runBench(ctx, rest, getenv, stdout, stderr)
	case "load":
		return runLoad(ctx, rest, getenv, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprintf(stderr, "docket: unknown command %q\n\n%s", cmd, usage)
		return errUsage
	}
}
