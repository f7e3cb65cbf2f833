package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/postgres"
)

// Bounds of the failover scenarios.
const (
	failoverResume = 5 * time.Second       // every process works again within this of the promotion
	notifyLatency  = 10 * time.Millisecond // enqueue→claim median of the probes after the failover
	failoverLease  = 5 * time.Second       // the processes' --lease
)

// failoverWarning starts the warning serve and worker log at start when
// a failover can lose acknowledged jobs (cmd/docket/pgcheck.go).
const failoverWarning = "A FAILOVER CAN LOSE ACKNOWLEDGED JOBS"

// failoverConfig sizes a failover run.
type failoverConfig struct {
	sync       bool          // synchronous replication
	rate       int           // uploads a second, over 3 uploaders
	produce    time.Duration // uploads last this long
	faultAfter time.Duration // the primary is killed this long after the first upload
	// lag, for an asynchronous pair, stops the standby's walreceiver
	// (SIGSTOP) this long before the kill: a standby behind its primary,
	// as a busy or distant one is.
	lag time.Duration
}

// TestFailover_SyncStandby: `docket serve` and three `docket worker`
// processes on an HA pair (a primary and a synchronous standby, streaming
// through a slot), connected with one multi-host URL and
// target_session_attrs=read-write (serve with the URL form, the workers
// with the keyword/value form). Under a steady load of uploads the
// primary's postmaster is SIGKILLed; the test, as the failover manager,
// waits until the standby has lost its stream and promotes it. Nothing
// acknowledged is lost: every upload answered 202 exists with its job,
// every completion a handler saw commit is kept (its job completed in that
// attempt); executions run twice are at most the jobs in flight at the
// kill; every process works again within 5 s of the promotion, without a
// restart; every process LISTENs on the new primary and jobs enqueued
// there start by notification (median under 10 ms); the maintenance
// leader is re-elected there. No process warns that a failover can lose
// jobs.
//
// Nightly tier only: with the pair, the build of docket and the four
// processes it took 32-75 s on the 2-core box, as loaded, over the 60 s a
// smoke scenario may take. Not parallel: two servers and four processes
// load the box, and its bounds (work again within 5 s, a 10 ms notify
// median) are the ones a neighbour breaks; it runs alone, before the
// parallel scenarios, as the full-size variants do.
func TestFailover_SyncStandby(t *testing.T) {
	nightlyOnly(t)
	runFailover(t, failoverConfig{sync: true, rate: 15, produce: 20 * time.Second, faultAfter: 5 * time.Second})
}

// TestFailover_AsyncStandby is the same failover with asynchronous
// replication, its standby 1.5 s behind at the kill (its walreceiver
// stopped): what it loses is measured and explained. Every upload whose
// commit the standby had received before the kill (the primary's WAL
// position read after the 202 at or before the standby's last received
// position) exists; every upload whose request began after that position
// (the position read before it was past) is gone; those in between may be
// either. Acknowledged completions lost are counted, and their jobs run
// again to completion. serve and every worker warn at start that a
// failover can lose acknowledged jobs. Nightly tier only and not
// parallel, as TestFailover_SyncStandby.
func TestFailover_AsyncStandby(t *testing.T) {
	nightlyOnly(t)
	runFailover(t, failoverConfig{sync: false, rate: 15, produce: 20 * time.Second, faultAfter: 5 * time.Second,
		lag: 1500 * time.Millisecond})
}

// failoverRun is one run's processes and what the test saw.
type failoverRun struct {
	t      *testing.T
	cfg    failoverConfig
	pair   *haPair
	pool   *pgxpool.Pool // the test's own, on the multi-host URL
	client *queue.Client
	tenant string
	up     *uploader
	serve  *docketProc
	procs  []*docketProc // serve first, then the workers

	lost map[int64]bool // job ids of acknowledged uploads lost (checkUploads)

	mu      sync.Mutex
	acked   []uploadRec
	refused []uploadErr
}

// uploadRec is an upload answered 202, with the primary's WAL position
// read just before its request and just after its answer (asynchronous
// pairs only).
type uploadRec struct {
	uploadAck
	at            time.Time
	before, after walRead
}

type uploadErr struct {
	at  time.Time
	err error
}

func runFailover(t *testing.T, cfg failoverConfig) {
	pair := startHAPair(t, cfg.sync)
	bin := buildDocket(t)
	r := startFailoverRun(t, cfg, pair, bin)
	r.checkStartWarnings()

	before := r.probeLatencies(9)
	t.Logf("enqueue→claim before the failover: %v", before)

	stopLoad := r.startLoad()
	time.Sleep(cfg.faultAfter) // the scenario: the fault comes this far into the load
	f := r.failover()
	stopLoad()
	t.Logf("failover: kill→standby stream lost %.2fs, kill→promoted %.2fs (promote itself %.2fs); "+
		"standby received %s at the kill",
		f.streamLost.Sub(f.killAt).Seconds(), f.promotedAt.Sub(f.killAt).Seconds(),
		f.promotedAt.Sub(f.promoteAt).Seconds(), lsnString(f.received))

	r.checkUploads(f)
	r.waitDrained(90 * time.Second)
	r.checkLedger(f)
	r.checkResumed(f)
	r.checkListening()
	after := r.probeLatencies(9)
	t.Logf("enqueue→claim after the failover: %v", after)
	if m := median(after); m > notifyLatency {
		t.Errorf("enqueue→claim median %s after the failover (before: %s), over %s: LISTEN not re-established?",
			m, median(before), notifyLatency)
	}
	r.checkLeader(f)
	for _, p := range r.procs {
		if p.exited() {
			t.Errorf("%s exited (%s) during the failover; no process may need a restart:\n%s", p.name, p.cmd.ProcessState, p.logTail(15))
		}
	}
	if t.Failed() {
		for _, p := range r.procs {
			t.Logf("--- %s (pid %d), last log lines:\n%s", p.name, p.pid(), p.logTail(15))
		}
	}
}

// startFailoverRun creates a tenant, starts serve (URL form) and three
// workers (keyword/value form) on the pair, and opens the test's pool.
func startFailoverRun(t *testing.T, cfg failoverConfig, pair *haPair, bin string) *failoverRun {
	t.Helper()
	r := &failoverRun{t: t, cfg: cfg, pair: pair}
	common := []string{"DOCKET_BLOB_URL=" + t.TempDir(), "DOCKET_LOG_FORMAT=json", "DOCKET_LOG_LEVEL=info",
		"DOCKET_SANDBOX=false", "DOCKET_LEASE=" + failoverLease.String(), "DOCKET_SHUTDOWN_GRACE=5s"}
	urlEnv := append([]string{"DATABASE_URL=" + pair.url(), "DOCKET_DATA_DIR=" + t.TempDir()}, common...)

	tenants := startDocketProc(t, "tenants-create", bin, urlEnv, "tenants", "create", "--name", "failover",
		"--plan", "enterprise", "--concurrency", "32", "--rate-limit", "1000000", "--json")
	<-tenants.done
	var created struct {
		Tenant struct {
			ID string `json:"id"`
		} `json:"tenant"`
		APIKey string `json:"api_key"`
	}
	if err := json.Unmarshal([]byte(tenants.stdout.String()), &created); err != nil || tenants.cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("docket tenants create: %v (%s)\n%s\n%s", err, tenants.cmd.ProcessState, tenants.stdout.String(), tenants.log())
	}
	r.tenant = created.Tenant.ID

	r.serve = startDocketProc(t, "serve", bin, urlEnv, "serve", "--listen", "127.0.0.1:0", "--concurrency", "2")
	var base string
	waitFor(t, 60*time.Second, "serve's dashboard line", func() (bool, string) {
		if r.serve.exited() {
			t.Fatalf("serve exited: %s\n%s", r.serve.cmd.ProcessState, r.serve.logTail(20))
		}
		m := dashboardLine.FindStringSubmatch(r.serve.stdout.String())
		if m != nil {
			base = m[1]
		}
		return m != nil, r.serve.stdout.String()
	})
	r.up = &uploader{base: base, key: created.APIKey, client: &http.Client{Timeout: 30 * time.Second}}
	r.procs = append(r.procs, r.serve)
	kvEnv := append([]string{"DATABASE_URL=" + pair.keywordValue()}, common...)
	for i := range 3 {
		env := append([]string{"DOCKET_DATA_DIR=" + t.TempDir()}, kvEnv...)
		r.procs = append(r.procs, startDocketProc(t, fmt.Sprintf("worker-%d", i+1), bin, env, "worker", "--concurrency", "4"))
	}
	for _, p := range r.procs {
		p.waitLog(t, "worker started", 60*time.Second)
	}

	pcfg, err := pgxpool.ParseConfig(pair.url())
	if err != nil {
		t.Fatal(err)
	}
	pcfg.MaxConns = 4
	if r.pool, err = pgxpool.NewWithConfig(context.Background(), pcfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.pool.Close)
	r.client = queue.NewClient(postgres.New(r.pool), queue.ClientConfig{})
	return r
}

// checkStartWarnings checks that serve and every worker warned at start
// that a failover can lose acknowledged jobs exactly when the pair
// replicates asynchronously.
func (r *failoverRun) checkStartWarnings() {
	for _, p := range r.procs {
		warned := strings.Contains(p.log(), failoverWarning)
		switch {
		case r.cfg.sync && warned:
			r.t.Errorf("%s warns that a failover can lose jobs on a synchronous pair:\n%s", p.name, p.logTail(10))
		case !r.cfg.sync && !warned:
			r.t.Errorf("%s started on an asynchronous pair without warning that a failover can lose jobs:\n%s", p.name, p.logTail(10))
		}
	}
}

// startLoad starts three uploaders sharing cfg.rate uploads a second for
// cfg.produce; the function it returns waits for them.
func (r *failoverRun) startLoad() func() {
	const uploaders = 3
	var wg sync.WaitGroup
	start := time.Now()
	for u := range uploaders {
		wg.Go(func() {
			tick := time.NewTicker(time.Duration(uploaders) * time.Second / time.Duration(r.cfg.rate))
			defer tick.Stop()
			for i := 0; time.Since(start) < r.cfg.produce; i++ {
				<-tick.C // pacing: the load's rate
				r.uploadOne(fmt.Sprintf("u%d-%04d.txt", u, i))
			}
		})
	}
	return wg.Wait
}

// uploadOne uploads one document and records the answer; on an
// asynchronous pair, with the primary's WAL position around it.
func (r *failoverRun) uploadOne(name string) {
	before := walRead{lsn: -1}
	if !r.cfg.sync {
		before = r.walPosition()
	}
	ack, err := r.up.upload(context.Background(), name)
	at := time.Now()
	after := walRead{lsn: -1}
	if err == nil && !r.cfg.sync {
		after = r.walPosition()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.refused = append(r.refused, uploadErr{at: at, err: err})
		return
	}
	r.acked = append(r.acked, uploadRec{uploadAck: ack, at: at, before: before, after: after})
}

// walRead is a WAL position of the primary: lsn, -1 when it could not be
// read, and when the query was sent (a query sent before the promotion
// can only have reached the old primary).
type walRead struct {
	lsn  int64
	sent time.Time
}

// walPosition reads the primary's current WAL write position.
func (r *failoverRun) walPosition() walRead {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	w := walRead{lsn: -1, sent: time.Now()}
	if err := r.pool.QueryRow(ctx, `SELECT (pg_current_wal_lsn() - '0/0')::bigint`).Scan(&w.lsn); err != nil {
		w.lsn = -1
	}
	return w
}

// probeLatencies enqueues n jobs one at a time from this process (so
// that the processes hear of each only through LISTEN, polling once a
// second) and returns each one's latency from the enqueue's commit
// returning to the claim (the claim's started_at; the host's clock is the
// database's): a kind no process handles, in the documents queue, claimed
// and failed at once. The commit itself waits for the WAL flush of both
// servers on a synchronous pair, which is not the notification's cost.
func (r *failoverRun) probeLatencies(n int) []time.Duration {
	r.t.Helper()
	var out []time.Duration
	for range n {
		res, err := r.client.Enqueue(context.Background(), &queue.EnqueueParams{
			Queue: docket.DocumentQueue, Kind: "failover_probe", TenantID: r.tenant, MaxAttempts: 1})
		committed := time.Now()
		if err != nil {
			r.t.Fatalf("enqueue a probe: %v", err)
		}
		var d time.Duration
		waitFor(r.t, 10*time.Second, "a probe job to be claimed", func() (bool, string) {
			var started *time.Time
			err := r.pool.QueryRow(context.Background(), `SELECT started_at FROM docket_jobs WHERE id = $1`, res.Job.ID).Scan(&started)
			if err != nil || started == nil {
				return false, fmt.Sprintf("job %d: started %v, %v", res.Job.ID, started, err)
			}
			d = started.Sub(committed)
			return true, ""
		})
		out = append(out, d.Round(100*time.Microsecond))
	}
	return out
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// lsnString renders a WAL position as PostgreSQL does.
func lsnString(lsn int64) string { return fmt.Sprintf("%X/%X", uint64(lsn)>>32, uint32(lsn)) }

// signalPID sends sig to pid, a process of the pair's (a server process
// this test's pair started).
func signalPID(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }
