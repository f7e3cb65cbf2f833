package pgtest

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sweepStale stops and removes clusters left behind by test processes that
// died without cleaning up (a test binary killed by `go test -timeout`
// never runs its deferred calls). A directory is stale when the process
// named in its owner.pid no longer exists; its server is stopped through
// its own data directory, and only when its postmaster.pid names a running
// postgres process.
func sweepStale(opts Options) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "owner.pid"))
		if err != nil {
			continue
		}
		owner, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || owner <= 0 || processAlive(owner) {
			continue
		}
		s := &server{opts: opts, dir: dir}
		if pid := s.pid(); pid > 0 && isPostgres(pid) {
			_ = syscall.Kill(pid, syscall.SIGQUIT) // immediate shutdown
			if !waitExit(pid, 5*time.Second) {
				continue // a later sweep removes it
			}
		}
		opts.Logf("pgtest: removing stale cluster %s (owner %d gone)", dir, owner)
		_ = os.RemoveAll(dir)
	}
}

// waitExit polls until process pid is gone or d has passed.
func waitExit(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// isPostgres reports whether pid is a running postgres process (Linux).
func isPostgres(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return err == nil && strings.TrimSpace(string(b)) == "postgres"
}
