// Command noisy is a noisy-neighbour benchmark of `docket serve`: tenant B
// uploads and searches ordinary documents at a steady pace, alone (idle),
// then while tenant A sends hostile documents (attack). It reports B's
// latencies in both phases, the peak resident memory of serve and its
// sandbox children against the configured budget (--parse-memory-bytes), and
// how each of A's documents ended.
//
//	go run ./bench/noisy [--quick] [--out FILE] [--docket PATH] [--database-url URL]
//
// Exit status 1 when a check fails: a B request failed, B's upload p99 or
// search p95 under attack is over 2x idle, the peak RSS with children is over
// the budget + 300 MiB, or an A document did not end or failed without a
// reason; 2 when the run could not be made.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const mib = 1 << 20

var base string // the server's URL, http://127.0.0.1:port

// sizes is the load of a run.
type sizes struct {
	Uploads, Searches          int           // B's requests per phase, one after another
	UploadPace, SearchPace     time.Duration // between the starts of B's requests
	DollarBytes, ChunkBytes    int           // A's text of "$1 "; A's text of many chunks
	BombBytes                  int64         // what A's flate bomb PDF inflates to
	MediumBytes, CancelRounds  int           // A's cancel/retry loop
	WaitA                      time.Duration // bound on A's documents ending
	ParseMemory, SandboxMemory int64
}

// full is the load of a real run. B's 200 uploads a phase take 40 s, half
// of A's attack, and make the p99 (nearest rank) the third-slowest upload:
// with 40, it was the slowest, and one hiccup decided the check.
var full = sizes{Uploads: 200, Searches: 400, UploadPace: 200 * time.Millisecond, SearchPace: 100 * time.Millisecond,
	DollarBytes: 16 * mib, ChunkBytes: 92_000 * 680, BombBytes: 2 << 30, MediumBytes: 4 * mib, CancelRounds: 10,
	WaitA: 15 * time.Minute, ParseMemory: 1 << 30, SandboxMemory: 512 * mib}

var quick = sizes{Uploads: 10, Searches: 20, UploadPace: 100 * time.Millisecond, SearchPace: 50 * time.Millisecond,
	DollarBytes: mib, ChunkBytes: 2_000 * 680, BombBytes: 64 * mib, MediumBytes: 256 << 10, CancelRounds: 3,
	WaitA: 3 * time.Minute, ParseMemory: 1 << 30, SandboxMemory: 512 * mib}

// report is what a run measured: the table and --out show it.
type report struct {
	Load                           sizes
	Store                          string
	Idle, Attack                   phase
	UploadP99Ratio, SearchP95Ratio float64 // attack / idle
	PeakRSS                        peak
	BudgetMiB                      float64
	A                              []*doc
	Failures                       []string
}

func main() {
	bin := flag.String("docket", "", "docket binary to run (default: build ./cmd/docket)")
	dbURL := flag.String("database-url", "", "PostgreSQL URL for serve (default: embedded SQLite)")
	out := flag.String("out", "", "also write the report as JSON to this file")
	isQuick := flag.Bool("quick", false, "small sizes, for a smoke run")
	flag.Parse()
	sz := full
	if *isQuick {
		sz = quick
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	rep, err := run(ctx, *bin, *dbURL, sz)
	stop()
	if err == nil && *out != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		err = os.WriteFile(*out, append(b, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "noisy:", err)
		os.Exit(2)
	}
	if len(rep.Failures) > 0 {
		os.Exit(1)
	}
}

// run starts serve in a temporary directory, runs both phases, prints the
// table and stops serve.
func run(ctx context.Context, bin, dbURL string, sz sizes) (*report, error) {
	tmp, err := os.MkdirTemp("", "docket-noisy-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if bin == "" {
		logf("building docket")
		bin = filepath.Join(tmp, "docket")
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/docketq/docket/cmd/docket").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build: %w\n%s", err, out)
		}
	}
	logf("making A's documents")
	names, data := attackPayloads(sz)
	srv, err := startServe(bin, filepath.Join(tmp, "data"), dbURL, sz)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	rssCtx, stopRSS := context.WithCancel(ctx)
	defer stopRSS()
	peaks := watchRSS(rssCtx, srv.cmd.Process.Pid)
	base = srv.base
	keyA, errA := createTenant(ctx, srv.adminKey, "noisy-a")
	keyB, errB := createTenant(ctx, srv.adminKey, "noisy-b")
	if err := errors.Join(errA, errB); err != nil {
		return nil, err
	}
	rep := &report{Load: sz, Store: "sqlite", BudgetMiB: float64(sz.ParseMemory) / mib}
	if dbURL != "" {
		rep.Store = "postgres"
	}
	logf("idle phase: B alone, %d uploads and %d searches", sz.Uploads, sz.Searches)
	var bDocs []*doc
	rep.Idle = runB(ctx, keyB, sz, 0, &bDocs)
	if err := waitDocs(ctx, keyB, bDocs, 5*time.Minute); err != nil {
		return nil, fmt.Errorf("waiting for B's idle documents (5 minutes at most): %w", err)
	}
	logf("attack phase: A's documents, and B's load again")
	attacked := make(chan []*doc, 1)
	go func() { attacked <- attackA(ctx, keyA, names, data, sz.CancelRounds) }()
	rep.Attack = runB(ctx, keyB, sz, sz.Uploads, &bDocs)
	rep.A = <-attacked
	logf("waiting (at most %s) for A's documents to end", sz.WaitA)
	waitErr := waitDocs(ctx, keyA, rep.A, sz.WaitA)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	stopRSS()
	rep.PeakRSS = <-peaks
	check(rep, waitErr)
	printTable(rep)
	return rep, nil
}

// check fills in the ratios and the failures.
func check(rep *report, waitErr error) {
	fail := func(format string, args ...any) { rep.Failures = append(rep.Failures, fmt.Sprintf(format, args...)) }
	rep.UploadP99Ratio = rep.Attack.UploadMs.P99 / max(rep.Idle.UploadMs.P99, 0.001)
	rep.SearchP95Ratio = rep.Attack.SearchMs.P95 / max(rep.Idle.SearchMs.P95, 0.001)
	if waitErr != nil && !errors.Is(waitErr, context.DeadlineExceeded) {
		fail("following A's documents: %v", waitErr)
	}
	if n := rep.Idle.Errors + rep.Attack.Errors; n > 0 {
		fail("%d of B's requests failed (logged above)", n)
	}
	if rep.UploadP99Ratio > 2 {
		fail("B's upload p99 under attack is %.2fx idle (limit 2x)", rep.UploadP99Ratio)
	}
	if rep.SearchP95Ratio > 2 {
		fail("B's search p95 under attack is %.2fx idle (limit 2x)", rep.SearchP95Ratio)
	}
	if all := float64(rep.PeakRSS.All) / mib; all > rep.BudgetMiB+300 {
		fail("peak RSS with children %.0f MiB is over the budget + 300 MiB (%.0f MiB)", all, rep.BudgetMiB+300)
	}
	for _, d := range rep.A {
		if !d.ended() {
			fail("A's %s did not end (%s)", d.Name, d.Status)
		} else if d.Status == "failed" && d.Error == "" {
			fail("A's %s failed without a reason", d.Name)
		}
	}
}

func printTable(rep *report) {
	sz, i, a := rep.Load, rep.Idle, rep.Attack
	fmt.Printf(`
noisy neighbour on %s; B per phase: %d uploads every %s, %d searches every %s

tenant B, ms       idle     attack  attack/idle
upload p50   %10.1f %10.1f
upload p99   %10.1f %10.1f %10.2f
upload max   %10.1f %10.1f
search p50   %10.1f %10.1f
search p95   %10.1f %10.1f %10.2f
search max   %10.1f %10.1f
failed       %10d %10d

peak RSS: serve %.0f MiB, serve + children %.0f MiB (at most %d children);
budget %.0f MiB (--parse-memory-bytes %d MiB), limit %.0f MiB (budget + 300); sandbox %d MiB a child

`, rep.Store, sz.Uploads, sz.UploadPace, sz.Searches, sz.SearchPace,
		i.UploadMs.P50, a.UploadMs.P50, i.UploadMs.P99, a.UploadMs.P99, rep.UploadP99Ratio, i.UploadMs.Max, a.UploadMs.Max,
		i.SearchMs.P50, a.SearchMs.P50, i.SearchMs.P95, a.SearchMs.P95, rep.SearchP95Ratio,
		i.SearchMs.Max, a.SearchMs.Max, i.Errors, a.Errors,
		float64(rep.PeakRSS.Serve)/mib, float64(rep.PeakRSS.All)/mib, rep.PeakRSS.Children,
		rep.BudgetMiB, sz.ParseMemory/mib, rep.BudgetMiB+300, sz.SandboxMemory/mib)
	for _, s := range a.Slowest {
		fmt.Printf("B's slowest under attack: %s, %.0f ms, %.1f s into the phase\n", s.Name, s.Ms, s.AtS)
	}
	fmt.Printf("\n%-22s %7s  %-9s %8s  %s\n", "tenant A document", "MiB", "status", "after", "error; note")
	for _, d := range rep.A {
		e := strings.Join(strings.Fields(strings.Trim(d.Error+"; "+d.Note, "; ")), " ")
		fmt.Printf("%-22s %7.1f  %-9s %7.0fs  %.110s\n", d.Name, float64(d.Size)/mib, d.Status, d.EndedAfterS, e)
	}
	fmt.Println()
	if len(rep.Failures) == 0 {
		fmt.Println("checks: all hold")
	}
	for _, f := range rep.Failures {
		fmt.Println("FAILED:", f)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// server is a running `docket serve`; its log (warnings and errors) goes to
// our stderr.
type server struct {
	cmd            *exec.Cmd
	base, adminKey string
	exited         chan struct{}
}

// startServe starts serve on dataDir and returns once its banner has named
// the dashboard's URL and the admin key file. Serve gets our environment
// (DOCKET_* variables tune it) but not DATABASE_URL: only --database-url.
func startServe(bin, dataDir, dbURL string, sz sizes) (*server, error) {
	args := []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", dataDir,
		"--parse-memory-bytes", strconv.FormatInt(sz.ParseMemory, 10), "--sandbox-memory-bytes", strconv.FormatInt(sz.SandboxMemory, 10)}
	if dbURL != "" {
		args = append(args, "--database-url", dbURL)
	}
	// Not CommandContext: serve is stopped by stop, with SIGTERM first.
	cmd := exec.Command(bin, args...) //nolint:noctx // see above
	cmd.Env, cmd.Stderr = append(os.Environ(), "DATABASE_URL=", "DOCKET_LOG_LEVEL=warn"), os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	logf("started docket serve, pid %d", cmd.Process.Pid)
	s := &server{cmd: cmd, exited: make(chan struct{})}
	sc, keyFile := bufio.NewScanner(stdout), ""
	for s.base == "" && sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "admin_key_file: "); ok {
			keyFile = v
		} else if v, ok := strings.CutPrefix(sc.Text(), "dashboard: "); ok {
			s.base = strings.TrimSuffix(v, "/")
		}
	}
	go func() {
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
		close(s.exited)
	}()
	key, err := os.ReadFile(keyFile)
	if s.base == "" {
		err = errors.New("serve ended before its banner named the dashboard (its log is above)")
	}
	if err != nil {
		s.stop()
		return nil, err
	}
	s.adminKey = strings.TrimSpace(string(key))
	return s, nil
}

// stop sends SIGTERM, and SIGKILL if serve has not exited 30 s later.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		logf("serve did not exit 30 s after SIGTERM: killing it")
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// peak is the largest resident memory seen, in bytes: of serve alone, and
// of serve and all its descendants (their VmRSS summed, so a page they share
// counts once per process). Children is the most descendants seen at once.
type peak struct{ Serve, All, Children int64 }

// watchRSS samples pid and its descendants every 100 ms until ctx ends,
// then sends the peaks.
func watchRSS(ctx context.Context, pid int) <-chan peak {
	out := make(chan peak, 1)
	go func() {
		var m peak
		for t := time.NewTicker(100 * time.Millisecond); ; {
			p := sampleRSS(pid)
			m = peak{max(m.Serve, p.Serve), max(m.All, p.All), max(m.Children, p.Children)}
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				out <- m
				return
			}
		}
	}()
	return out
}

// sampleRSS reads pid's VmRSS and that of its descendants, found through
// the PPid of every process.
func sampleRSS(pid int) peak {
	entries, _ := os.ReadDir("/proc")
	kids, rss := map[int][]int{}, map[int]int64{}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/status")
		for l := range strings.Lines(string(b)) {
			if k, v, _ := strings.Cut(l, ":"); k == "PPid" || k == "VmRSS" {
				x, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				if k == "PPid" {
					kids[int(x)] = append(kids[int(x)], n)
				} else {
					rss[n] = x << 10
				}
			}
		}
	}
	p := peak{Serve: rss[pid], All: rss[pid]}
	for queue := kids[pid]; len(queue) > 0; queue = queue[1:] {
		p.All, p.Children = p.All+rss[queue[0]], p.Children+1
		queue = append(queue, kids[queue[0]]...)
	}
	return p
}
