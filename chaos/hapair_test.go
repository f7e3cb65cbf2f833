package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// haStandbyName is the standby's name on its primary: its cluster_name,
// which its walreceiver gives as application_name, and its slot.
const haStandbyName = "standby1"

// haNode is one server of an HA pair: its data directory, log and Unix
// socket under dir.
type haNode struct {
	name string
	dir  string
	port int
}

func (n *haNode) data() string { return filepath.Join(n.dir, "data") }
func (n *haNode) log() string  { return filepath.Join(n.dir, "postgres.log") }

// connString is a keyword/value connection string to db on this server
// alone.
func (n *haNode) connString(db string) string {
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=%s sslmode=disable", n.dir, n.port, db)
}

// pid is the postmaster's PID from postmaster.pid, or 0.
func (n *haNode) pid() int {
	b, err := os.ReadFile(filepath.Join(n.data(), "postmaster.pid"))
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(line)))
	return pid
}

func (n *haNode) logTail(lines int) string {
	b, err := os.ReadFile(n.log())
	if err != nil {
		return "(no server log: " + err.Error() + ")"
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// haPair is a PostgreSQL primary and a standby fed by streaming
// replication through a physical slot, both on Unix sockets of their own,
// started by the test. With sync, the primary's synchronous_standby_names
// names the standby: every commit waits until the standby has flushed it.
// The standby runs with synchronous_standby_names empty, so that once
// promoted it does not wait for a standby it does not have (what a
// failover manager sets when it promotes).
type haPair struct {
	t                *testing.T
	binDir           string
	runAs            string // "postgres" when this process is root (initdb refuses root)
	root             string
	primary, standby *haNode
	sync             bool
}

// startHAPair starts a primary, takes a base backup of it for the standby
// (pg_basebackup -R, creating the slot), starts the standby and waits
// until it streams, then creates the database "docket". Both servers are
// stopped and their directories removed when the test ends.
func startHAPair(t *testing.T, sync bool) *haPair {
	t.Helper()
	if testing.Short() {
		t.Skip("chaos tests start real worker processes; skipped with -short")
	}
	if cluster.External() {
		t.Skip("this scenario starts and kills servers of its own; not with DOCKET_TEST_DATABASE_URL")
	}
	p := &haPair{t: t, sync: sync}
	var err error
	if p.binDir, err = pgBinDir(); err != nil {
		t.Skip(err.Error())
	}
	if os.Geteuid() == 0 {
		if _, err := user.Lookup("postgres"); err != nil {
			t.Skipf("running as root needs a postgres user for initdb: %v", err)
		}
		p.runAs = "postgres"
	}
	if p.root, err = os.MkdirTemp("", "docket-ha-"); err != nil {
		t.Fatal(err)
	}
	p.primary = &haNode{name: "primary", dir: filepath.Join(p.root, "p"), port: 5432}
	p.standby = &haNode{name: "standby", dir: filepath.Join(p.root, "s"), port: 5433}
	t.Cleanup(p.stop)
	for _, dir := range []string{p.root, p.primary.dir, p.standby.dir} {
		if err := p.own(dir); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p.must(ctx, "initdb", "-D", p.primary.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8",
		"--locale=C", "--no-sync", "--no-instructions")
	names := "''"
	if sync {
		names = "'" + haStandbyName + "'"
	}
	p.appendConf(p.primary, fmt.Sprintf(`
listen_addresses = ''
port = %d
unix_socket_directories = '%s'
max_connections = 200
shared_buffers = 32MB
fsync = on
synchronous_commit = on
full_page_writes = on
wal_level = replica
max_wal_senders = 5
max_replication_slots = 5
hot_standby = on
synchronous_standby_names = %s
log_line_prefix = '%%m [%%p] %%a: '
`, p.primary.port, p.primary.dir, names))
	p.must(ctx, "pg_ctl", "start", "-D", p.primary.data(), "-w", "-t", "60", "-l", p.primary.log())
	p.must(ctx, "pg_basebackup", "-h", p.primary.dir, "-p", strconv.Itoa(p.primary.port), "-U", "postgres",
		"-D", p.standby.data(), "-R", "-C", "-S", haStandbyName, "-X", "stream", "-c", "fast")
	p.appendConf(p.standby, fmt.Sprintf(`
port = %d
unix_socket_directories = '%s'
cluster_name = '%s'
synchronous_standby_names = ''
`, p.standby.port, p.standby.dir, haStandbyName))
	p.must(ctx, "pg_ctl", "start", "-D", p.standby.data(), "-w", "-t", "60", "-l", p.standby.log())
	want := "async"
	if sync {
		want = "sync"
	}
	waitFor(t, 30*time.Second, "the standby to stream", func() (bool, string) {
		var state, syncState string
		err := p.queryRow(p.primary, "postgres", `SELECT state, sync_state FROM pg_stat_replication WHERE application_name = $1`,
			[]any{haStandbyName}, &state, &syncState)
		return err == nil && state == "streaming" && syncState == want, fmt.Sprintf("%s %s %v", state, syncState, err)
	})
	if err := p.exec(p.primary, "postgres", `CREATE DATABASE docket`); err != nil {
		t.Fatal(err)
	}
	return p
}

// url is the multi-host URL of the pair: both sockets, the primary's
// first, and target_session_attrs=read-write, so that a connection goes to
// whichever server is the primary now.
func (p *haPair) url() string {
	q := url.Values{
		"host":                 {p.primary.dir + "," + p.standby.dir},
		"port":                 {fmt.Sprintf("%d,%d", p.primary.port, p.standby.port)},
		"target_session_attrs": {"read-write"},
		"sslmode":              {"disable"},
	}
	return (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/docket", RawQuery: q.Encode()}).String()
}

// keywordValue is url in the keyword/value form.
func (p *haPair) keywordValue() string {
	return fmt.Sprintf("host=%s,%s port=%d,%d user=postgres dbname=docket sslmode=disable target_session_attrs=read-write",
		p.primary.dir, p.standby.dir, p.primary.port, p.standby.port)
}

// killPrimary kills the primary as a crash of its host would: every
// process of the server (the postmaster and its children: backends,
// walsenders, the WAL writer) is stopped with SIGSTOP, the postmaster
// first so that it forks no more, then all are SIGKILLed, so that none of
// them sends anything once the first is gone. (A SIGKILL of the
// postmaster alone leaves its walsender streaming what it has until it
// notices, which a host crash does not.) It returns when the last process
// was stopped: nothing of the server ran after that.
func (p *haPair) killPrimary() (time.Time, error) {
	pid := p.primary.pid()
	if pid <= 0 {
		return time.Time{}, errors.New("no primary postmaster to kill")
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return time.Time{}, fmt.Errorf("SIGSTOP postmaster %d: %w", pid, err)
	}
	pids := append([]int{pid}, childrenOf(pid)...)
	for _, c := range pids[1:] {
		if err := syscall.Kill(c, syscall.SIGSTOP); err != nil && !errors.Is(err, syscall.ESRCH) {
			return time.Time{}, fmt.Errorf("SIGSTOP server process %d: %w", c, err)
		}
	}
	stopped := time.Now()
	for _, c := range pids {
		if err := syscall.Kill(c, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return stopped, fmt.Errorf("SIGKILL server process %d: %w", c, err)
		}
	}
	return stopped, nil
}

// childrenOf returns the processes whose parent is pid (from /proc).
func childrenOf(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
			c, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			out = append(out, c)
		}
	}
	return out
}

// promote promotes the standby (pg_ctl promote -w: it returns once the
// standby accepts writes).
func (p *haPair) promote(ctx context.Context) error {
	_, err := p.run(ctx, "pg_ctl", "promote", "-D", p.standby.data(), "-w", "-t", "60")
	return err
}

// stop stops both servers (immediate) and removes their directories; on
// failure it logs the tails of their logs first.
func (p *haPair) stop() {
	if p.t.Failed() {
		for _, n := range []*haNode{p.primary, p.standby} {
			p.t.Logf("%s server log, last lines:\n%s", n.name, n.logTail(30))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, n := range []*haNode{p.primary, p.standby} {
		if pid := n.pid(); pid > 0 && syscall.Kill(pid, 0) == nil {
			if _, err := p.run(ctx, "pg_ctl", "stop", "-D", n.data(), "-m", "immediate", "-w"); err != nil {
				p.t.Errorf("stop %s: %v", n.name, err)
			}
		}
	}
	if err := os.RemoveAll(p.root); err != nil {
		p.t.Errorf("remove %s: %v", p.root, err)
	}
}

// run runs a PostgreSQL binary, as the postgres user when this process is
// root, and returns its output.
func (p *haPair) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	path := filepath.Join(p.binDir, name)
	cmd := exec.CommandContext(ctx, path, args...)
	if p.runAs != "" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", p.runAs, "--", path}, args...)...)
	}
	cmd.Dir = p.root
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return out, nil
}

func (p *haPair) must(ctx context.Context, name string, args ...string) {
	p.t.Helper()
	if _, err := p.run(ctx, name, args...); err != nil {
		p.t.Fatal(err)
	}
}

// own creates dir and, as root, hands it to the postgres user.
func (p *haPair) own(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if p.runAs == "" {
		return nil
	}
	u, err := user.Lookup(p.runAs)
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(dir, uid, gid)
}

// appendConf appends lines to n's postgresql.conf (a later line of a
// setting overrides an earlier one).
func (p *haPair) appendConf(n *haNode, lines string) {
	p.t.Helper()
	f, err := os.OpenFile(filepath.Join(n.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		p.t.Fatal(err)
	}
	_, err = f.WriteString(lines)
	if err = errors.Join(err, f.Close()); err != nil {
		p.t.Fatal(err)
	}
}

// queryRow runs one query on server n alone, in database db.
func (p *haPair) queryRow(n *haNode, db, query string, args []any, dest ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, n.connString(db))
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return conn.QueryRow(ctx, query, args...).Scan(dest...)
}

// exec runs a statement on server n alone, in database db.
func (p *haPair) exec(n *haNode, db, stmt string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, n.connString(db))
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, stmt)
	return err
}

// pgBinDir is where PostgreSQL's server binaries are: version 15's, else
// the newest installed, else initdb's directory on PATH.
func pgBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	best := ""
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_basebackup")); err != nil {
			continue
		}
		if strings.HasPrefix(d, "/usr/lib/postgresql/15/") {
			return d, nil
		}
		best = d
	}
	if best != "" {
		return best, nil
	}
	if p, err := exec.LookPath("pg_basebackup"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("no PostgreSQL server binaries with pg_basebackup (install postgresql-15)")
}
