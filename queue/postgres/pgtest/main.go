package pgtest

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
)

var defaultCluster atomic.Pointer[Cluster]

// Main starts a cluster with opts, runs the tests and stops the cluster. Call
// it from TestMain; it does not return.
func Main(m *testing.M, opts Options) {
	os.Exit(run(m, opts))
}

// MainParallel is Main for a package whose tests mostly wait (on the
// server, on leases and polls) rather than compute: it first raises
// -test.parallel to at least n, so that the package's tests overlap
// instead of queueing behind a limit set for CPU-bound packages (the test
// command's -parallel 4).
func MainParallel(m *testing.M, n int, opts Options) {
	flag.Parse()
	if f := flag.Lookup("test.parallel"); f != nil {
		if cur, err := strconv.Atoi(f.Value.String()); err == nil && cur < n {
			_ = f.Value.Set(strconv.Itoa(n))
		}
	}
	Main(m, opts)
}

func run(m *testing.M, opts Options) int {
	c, err := Start(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defaultCluster.Store(c)
	code := m.Run()
	defaultCluster.Store(nil)
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Default returns the cluster started by Main, or nil.
func Default() *Cluster { return defaultCluster.Load() }

// NewDatabase creates a fresh database on the cluster started by Main and
// returns its connection string; see Cluster.NewDatabase.
func NewDatabase(t testing.TB) string {
	t.Helper()
	c := Default()
	if c == nil {
		t.Fatal("pgtest: no cluster: call pgtest.Main(m, opts) from TestMain")
	}
	return c.NewDatabase(t)
}

// NewEmptyDatabase creates an empty database on the cluster started by
// Main; see Cluster.NewEmptyDatabase.
func NewEmptyDatabase(t testing.TB) string {
	t.Helper()
	c := Default()
	if c == nil {
		t.Fatal("pgtest: no cluster: call pgtest.Main(m, opts) from TestMain")
	}
	return c.NewEmptyDatabase(t)
}
