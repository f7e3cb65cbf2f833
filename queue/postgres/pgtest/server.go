package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// dirPrefix names the temporary directories of clusters, so that a later
// run can find the ones a killed test process left behind.
const dirPrefix = "docket-testpg-"

// server is a PostgreSQL server process started by this process.
type server struct {
	opts   Options
	dir    string // temporary root: socket, log, owner file; data under data/
	binDir string
	port   int
	runAs  *user.User // non-nil when commands run through runuser
}

func startServer(opts Options) (*server, error) {
	sweepStale(opts)
	binDir, err := findBinDir()
	if err != nil {
		return nil, err
	}
	s := &server{opts: opts, binDir: binDir, port: 5432}
	if os.Geteuid() == 0 {
		if s.runAs, err = user.Lookup("postgres"); err != nil {
			return nil, fmt.Errorf("pgtest: running as root needs a postgres user for initdb: %w", err)
		}
	}
	if err := s.makeDir(); err != nil {
		return nil, err
	}
	if opts.TCP {
		if s.port, err = freePort(); err != nil {
			return nil, errors.Join(err, s.destroy())
		}
	}
	if err := s.initdb(); err != nil {
		return nil, errors.Join(err, s.destroy())
	}
	start := time.Now()
	if err := s.pgctl(context.Background(), "start", "-l", s.logFile()); err != nil {
		return nil, errors.Join(err, s.destroy())
	}
	opts.Logf("pgtest: server started in %v at %s", time.Since(start), s.dir)
	return s, nil
}

// makeDir creates the temporary root, records the owner process and, as
// root, hands the directory to the postgres user.
func (s *server) makeDir() error {
	dir, err := os.MkdirTemp(os.TempDir(), dirPrefix)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	s.dir = dir
	owner := filepath.Join(dir, "owner.pid")
	if err := os.WriteFile(owner, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return errors.Join(fmt.Errorf("pgtest: %w", err), s.destroy())
	}
	if err := s.chownToRunAs(dir); err != nil {
		return errors.Join(err, s.destroy())
	}
	return nil
}

func (s *server) dataDir() string { return filepath.Join(s.dir, "data") }
func (s *server) logFile() string { return filepath.Join(s.dir, "postgres.log") }

func (s *server) initdb() error {
	start := time.Now()
	ctx, cancel := withTimeout(s.opts.Timeout)
	defer cancel()
	if err := s.initdbCached(ctx, ""); err != nil { // initdb_cache.go
		return err
	}
	conf := filepath.Join(s.dataDir(), "postgresql.conf")
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	_, err = f.WriteString(s.opts.conf(s.dir, s.port))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pgtest: write postgresql.conf: %w", err)
	}
	s.opts.Logf("pgtest: data directory ready in %v", time.Since(start))
	return nil
}

// pgctl runs `pg_ctl <action> -D <data> -w -t <timeout> args...`.
func (s *server) pgctl(ctx context.Context, action string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout+5*time.Second)
	defer cancel()
	secs := strconv.Itoa(int(s.opts.Timeout.Seconds()))
	all := append([]string{action, "-D", s.dataDir(), "-w", "-t", secs, "-s"}, args...)
	out, err := s.command(ctx, "pg_ctl", all...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: pg_ctl %s: %w\n%s\nserver log:\n%s", action, err, out, s.logTail())
	}
	return nil
}

// command returns a command running binary name of the server's bin
// directory, as the postgres user when this process is root.
func (s *server) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	path := filepath.Join(s.binDir, name)
	var cmd *exec.Cmd
	if s.runAs != nil {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", s.runAs.Username, "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	cmd.Dir = s.dir
	if len(s.opts.Env) > 0 {
		cmd.Env = append(os.Environ(), s.opts.Env...)
	}
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// destroy stops the server immediately, kills its postmaster by PID if
// pg_ctl could not, and removes the directory.
func (s *server) destroy() error {
	var errs []error
	if pid := s.pid(); pid > 0 && isPostgres(pid) {
		if err := s.pgctl(context.Background(), "stop", "-m", "immediate"); err != nil {
			errs = append(errs, err)
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				errs = append(errs, fmt.Errorf("pgtest: kill postmaster %d: %w", pid, err))
			}
			waitExit(pid, 5*time.Second)
		}
	}
	if err := os.RemoveAll(s.dir); err != nil {
		errs = append(errs, fmt.Errorf("pgtest: %w", err))
	}
	return errors.Join(errs...)
}

// pid returns the postmaster's PID from postmaster.pid, or 0.
func (s *server) pid() int {
	b, err := os.ReadFile(filepath.Join(s.dataDir(), "postmaster.pid"))
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	pid, err := strconv.Atoi(strings.TrimSpace(string(line)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

func (s *server) logTail() string {
	b, err := os.ReadFile(s.logFile())
	if err != nil {
		return "(no server log)"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-30):], "\n")
}

// findBinDir finds the directory holding initdb and pg_ctl: PATH first,
// else the newest /usr/lib/postgresql/*/bin.
func findBinDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "pg_ctl")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	return "", errors.New("pgtest: no PostgreSQL server binaries: initdb not on PATH nor in /usr/lib/postgresql/*/bin " +
		"(install postgresql-15, or set " + EnvDatabaseURL + ")")
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func freePort() (int, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// cpu returns the CPU time the server has used so far, its ended backends
// included (the postmaster reaps them), as text: "12.3s", or "unknown"
// where /proc cannot tell.
func (s *server) cpu() string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.pid()))
	if err != nil {
		return "unknown"
	}
	// The fields after the command's closing parenthesis: utime, stime,
	// cutime and cstime are the 12th to 15th of them, in clock ticks.
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 15 {
		return "unknown"
	}
	ticks := 0
	for _, v := range f[11:15] {
		n, _ := strconv.Atoi(v)
		ticks += n
	}
	return fmt.Sprintf("%.1fs", float64(ticks)/100)
}
