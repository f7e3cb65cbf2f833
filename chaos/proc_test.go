package chaos

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// readyTimeout bounds how long a worker may take to print its ready line.
const readyTimeout = 20 * time.Second

// proc is one worker process started by a test.
type proc struct {
	slot, gen int
	cmd       *exec.Cmd
	pid       int
	logPath   string // its stderr
	stdin     io.WriteCloser
	started   time.Time
	connected chan struct{} // closed at the connected line (-start-gate)
	ready     chan struct{} // closed at the ready line
	done      chan struct{} // closed once reaped; ended and state are set then
	ended     time.Time
	state     *os.ProcessState
}

// appLike is a LIKE pattern of the application_name of p's sessions:
// chaosworker names them as docket worker does (postgres.ProcessName,
// "docket chaosworker <host>:<pid> pool=<n>").
func (p *proc) appLike() string {
	return fmt.Sprintf("docket chaosworker %%:%d pool=%%", p.pid)
}

// readyWatch is the child's stdout: it closes connected at the line a
// worker started with -start-gate prints once connected, and ready at the
// ready line.
type readyWatch struct {
	mu                       sync.Mutex
	buf                      bytes.Buffer
	connected, ready         chan struct{}
	onceConnected, onceReady sync.Once
}

func (w *readyWatch) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(b)
	if bytes.Contains(w.buf.Bytes(), []byte("connected pid=")) {
		w.onceConnected.Do(func() { close(w.connected) })
	}
	if bytes.Contains(w.buf.Bytes(), []byte("ready pid=")) {
		w.onceReady.Do(func() { close(w.ready) })
	}
	return len(b), nil
}

// startProc starts the worker binary with args; its stderr goes to a file in
// dir. Its standard input is a pipe this process holds, so a worker exits
// when the test process dies (-exit-on-stdin-eof).
func startProc(dir string, slot, gen int, args []string) (*proc, error) {
	return startProcIn(dir, slot, gen, nil, args)
}

// startProcIn is startProc with the worker started through prefix, a
// command that execs it in place (ip netns exec NAME: the PID stays the
// worker's).
func startProcIn(dir string, slot, gen int, prefix, args []string) (*proc, error) {
	logPath := filepath.Join(dir, fmt.Sprintf("worker-%02d-%03d.log", slot, gen))
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	p := &proc{slot: slot, gen: gen, logPath: logPath, connected: make(chan struct{}), ready: make(chan struct{}), done: make(chan struct{})}
	argv := append(append(append([]string{}, prefix...), workerBin, "-exit-on-stdin-eof"), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout = &readyWatch{connected: p.connected, ready: p.ready}
	cmd.Stderr = f
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe() // closed by Wait, or by the kernel when this process dies
	if err != nil {
		f.Close()
		return nil, err
	}
	p.stdin = stdin
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start worker: %w", err)
	}
	p.cmd, p.pid, p.started = cmd, cmd.Process.Pid, time.Now()
	go func() {
		_ = cmd.Wait() // the status is in ProcessState
		p.ended, p.state = time.Now(), cmd.ProcessState
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// waitReady waits for the ready line, or fails when the process exits first.
func (p *proc) waitReady(timeout time.Duration) error {
	select {
	case <-p.ready:
		return nil
	case <-p.done:
		return fmt.Errorf("worker pid %d exited before ready: %s\n%s", p.pid, p.status(), p.tail(20))
	case <-time.After(timeout):
		return fmt.Errorf("worker pid %d not ready after %s\n%s", p.pid, timeout, p.tail(20))
	}
}

// waitConnected waits for the connected line of a worker started with
// -start-gate, or fails when the process exits first.
func (p *proc) waitConnected(timeout time.Duration) error {
	select {
	case <-p.connected:
		return nil
	case <-p.done:
		return fmt.Errorf("worker pid %d exited before it connected: %s\n%s", p.pid, p.status(), p.tail(20))
	case <-time.After(timeout):
		return fmt.Errorf("worker pid %d not connected after %s\n%s", p.pid, timeout, p.tail(20))
	}
}

// openGate lets a worker started with -start-gate start its worker.
func (p *proc) openGate() error {
	_, err := io.WriteString(p.stdin, "go\n")
	return err
}

// signal sends sig to this process only, through its handle (a pidfd on
// Linux, so a reaped and reused PID is never hit). It reports whether the
// process was still there.
func (p *proc) signal(sig syscall.Signal) bool {
	return p.cmd.Process.Signal(sig) == nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitCode is the exit status, -1 when killed by a signal or still running.
func (p *proc) exitCode() int {
	if !p.exited() {
		return -1
	}
	return p.state.ExitCode()
}

func (p *proc) status() string {
	if !p.exited() {
		return "running"
	}
	return p.state.String()
}

// tail returns the last n lines of the process's stderr.
func (p *proc) tail(n int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// fleet is a set of worker slots, each running one process at a time; with
// a supervisor, a process that dies is replaced at once.
type fleet struct {
	t      *testing.T
	dir    string
	args   []string
	prefix []string // see startProcIn
	// slotArgs, when set, are more flags per slot (a worker restarted in
	// the slot gets its slot's again).
	slotArgs [][]string

	mu      sync.Mutex
	all     []*proc
	cur     []*proc
	killed  map[int]bool // PIDs this test SIGKILLed
	stopped bool
	wg      sync.WaitGroup
}

// maxGenerations caps restarts per slot, so a worker that crashes at start
// cannot make the supervisor spin.
const maxGenerations = 200

// startFleet starts n workers with args and waits until all are ready. With
// supervise, each dead worker is restarted until the test ends. The fleet
// is stopped (SIGKILL) in t.Cleanup, and on failure its processes' exits and
// stderr tails are logged.
func startFleet(t *testing.T, n int, supervise bool, args []string) *fleet {
	t.Helper()
	return startFleetIn(t, n, supervise, nil, args)
}

// startFleetIn is startFleet with every worker started through prefix
// (see startProcIn).
func startFleetIn(t *testing.T, n int, supervise bool, prefix, args []string) *fleet {
	t.Helper()
	f := newFleet(t, n, supervise, prefix, args)
	for _, p := range f.procs() {
		if err := p.waitReady(readyTimeout); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// startFleetGated starts n workers with args and -start-gate, waits until
// every one has its first connection, then lets them all start at once and
// waits until all are ready. Under a connection budget this gives each
// worker a connection before any pool grows: started plainly, workers that
// start first can take the whole budget before a late one (a process
// started half a second later on a loaded machine) connects at all.
// connected, when not nil, is called once all have connected, before the
// gates open.
func startFleetGated(t *testing.T, n int, args []string, connected func(*fleet)) *fleet {
	t.Helper()
	f := newFleet(t, n, false, nil, append(append([]string{}, args...), "-start-gate"))
	for _, p := range f.procs() {
		if err := p.waitConnected(readyTimeout); err != nil {
			t.Fatal(err)
		}
	}
	if connected != nil {
		connected(f)
	}
	for _, p := range f.procs() {
		if err := p.openGate(); err != nil {
			t.Fatalf("open the start gate of pid %d: %v", p.pid, err)
		}
	}
	for _, p := range f.procs() {
		if err := p.waitReady(readyTimeout); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// startFleetSlots is startFleet with more flags for each worker:
// slotArgs[i] for the worker of slot i, one slot per element.
func startFleetSlots(t *testing.T, args []string, slotArgs [][]string) *fleet {
	t.Helper()
	f := newFleetSlots(t, len(slotArgs), false, nil, args, slotArgs)
	for _, p := range f.procs() {
		if err := p.waitReady(readyTimeout); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// newFleet starts n workers (see startFleetIn) without waiting for them.
func newFleet(t *testing.T, n int, supervise bool, prefix, args []string) *fleet {
	t.Helper()
	return newFleetSlots(t, n, supervise, prefix, args, nil)
}

// newFleetSlots is newFleet with more flags per slot (see fleet.slotArgs).
func newFleetSlots(t *testing.T, n int, supervise bool, prefix, args []string, slotArgs [][]string) *fleet {
	t.Helper()
	f := &fleet{t: t, dir: logDir(t), args: args, prefix: prefix, slotArgs: slotArgs, cur: make([]*proc, n), killed: map[int]bool{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(f.diagnostics())
			t.Logf("PostgreSQL server log, last lines:\n%s", cluster.LogTail())
		}
	})
	t.Cleanup(f.stop)
	for slot := range n {
		p, err := f.spawn(slot)
		if err != nil || p == nil {
			t.Fatalf("start worker %d: %v", slot, err)
		}
		if supervise {
			f.wg.Go(func() { f.supervise(p) })
		}
	}
	return f
}

// logDir is where a fleet's workers write their stderr: a directory of
// its own under $CHAOS_KEEP_LOGS when that is set (kept after the test,
// for a diagnosis: the failure's log shows only each worker's last lines),
// else the test's temporary directory.
func logDir(t *testing.T) string {
	t.Helper()
	keep := os.Getenv("CHAOS_KEEP_LOGS")
	if keep == "" {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp(keep, "fleet-")
	if err != nil {
		t.Fatalf("CHAOS_KEEP_LOGS: %v", err)
	}
	t.Logf("the workers' logs are kept in %s", dir)
	return dir
}

// spawn starts a worker in slot; it returns nil, nil once the fleet is
// stopped.
func (f *fleet) spawn(slot int) (*proc, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return nil, nil
	}
	gen := 0
	if old := f.cur[slot]; old != nil {
		gen = old.gen + 1
	}
	if gen >= maxGenerations {
		return nil, fmt.Errorf("slot %d: %d workers started; giving up", slot, gen)
	}
	args := f.args
	if slot < len(f.slotArgs) {
		args = append(append([]string{}, args...), f.slotArgs[slot]...)
	}
	p, err := startProcIn(f.dir, slot, gen, f.prefix, args)
	if err != nil {
		return nil, err
	}
	f.all = append(f.all, p)
	f.cur[slot] = p
	return p, nil
}

// supervise restarts the slot's worker whenever it dies, until stop.
func (f *fleet) supervise(p *proc) {
	for p != nil {
		<-p.done
		next, err := f.spawn(p.slot)
		if err != nil {
			f.t.Errorf("supervisor: %v", err)
			return
		}
		p = next
	}
}

// procs returns the current process of every slot.
func (f *fleet) procs() []*proc {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*proc(nil), f.cur...)
}

// history returns every process started, in start order.
func (f *fleet) history() []*proc {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*proc(nil), f.all...)
}

// killRandom SIGKILLs the current process of a random slot that is ready
// and alive, and returns it (nil when none is).
func (f *fleet) killRandom() *proc {
	var live []*proc
	for _, p := range f.procs() {
		select {
		case <-p.ready:
			if !p.exited() {
				live = append(live, p)
			}
		default:
		}
	}
	if len(live) == 0 {
		return nil
	}
	p := live[rand.IntN(len(live))]
	f.mu.Lock()
	f.killed[p.pid] = true
	f.mu.Unlock()
	if !p.signal(syscall.SIGKILL) {
		return nil
	}
	return p
}

// killedPIDs returns the PIDs this test SIGKILLed.
func (f *fleet) killedPIDs() map[int]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[int]bool, len(f.killed))
	for pid := range f.killed {
		out[pid] = true
	}
	return out
}

// stop ends supervision, SIGKILLs the live workers and waits for them.
func (f *fleet) stop() {
	f.mu.Lock()
	f.stopped = true
	f.mu.Unlock()
	for _, p := range f.history() {
		if !p.exited() {
			p.signal(syscall.SIGKILL)
		}
	}
	f.wg.Wait()
	for _, p := range f.history() {
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			f.t.Errorf("worker pid %d did not exit after SIGKILL", p.pid)
		}
	}
}

// diagnostics lists every process with its fate, and the stderr tails of
// those that died unexpectedly or ran last in their slot.
func (f *fleet) diagnostics() string {
	killed := f.killedPIDs()
	var b strings.Builder
	b.WriteString("worker processes (slot/gen pid: fate):\n")
	last := map[int]*proc{}
	for _, p := range f.history() {
		fate := p.status()
		if killed[p.pid] {
			fate += " (killed by the test)"
		}
		fmt.Fprintf(&b, "  %d/%d pid %d: %s, lived %s\n", p.slot, p.gen, p.pid, fate, p.lifetime().Round(time.Millisecond))
		last[p.slot] = p
	}
	tails := 0
	for _, p := range f.history() {
		unexpected := p.exited() && !killed[p.pid] && p.exitCode() != 0 && p.exitCode() != exitPoison
		if (unexpected || last[p.slot] == p) && tails < 12 {
			tails++
			fmt.Fprintf(&b, "--- stderr of %d/%d pid %d (%s), last lines:\n%s\n", p.slot, p.gen, p.pid, p.logPath, p.tail(25))
		}
	}
	return b.String()
}

func (p *proc) lifetime() time.Duration {
	if p.exited() {
		return p.ended.Sub(p.started)
	}
	return time.Since(p.started)
}

// exitPoison is the exit status of a worker that ran an exit job.
const exitPoison = 3
