package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// grace is the --shutdown-grace of every process of a deployment.
const grace = 5 * time.Second

// deployment is `docket serve` and two `docket worker` processes on one
// PostgreSQL database and one blob directory, as a production deployment runs them.
type deployment struct {
	bin     string
	env     []string
	db      pgDatabase
	srv     server // with the tenant's key
	serve   *proc
	workers []*proc
	events  *eventStream
}

// The PostgreSQL deployment as separate processes: a tenant made by
// `docket tenants create`, uploads to `docket serve`, jobs run by it and
// by two `docket worker` processes, their progress on serve's event stream
// (LISTEN/NOTIFY across processes); a worker killed with SIGKILL mid-job
// loses nothing (another process runs the job again); SIGTERM ends every
// process with status 0 within its grace.
func TestDeployment_PostgresMultiProcess(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary on PostgreSQL")
	}
	start := time.Now()
	d := startDeployment(t)
	t.Logf("tenant, serve and 2 workers up in %s", time.Since(start).Round(time.Millisecond))

	step := time.Now()
	small := d.uploadSpread(t)
	t.Logf("%d documents over 3 processes in %s", len(small), time.Since(step).Round(time.Millisecond))

	step = time.Now()
	big := d.killWorkerMidJob(t)
	t.Logf("worker killed mid-job, its job rerun elsewhere in %s", time.Since(step).Round(time.Millisecond))

	d.checkNothingLost(t, len(small)+len(big))

	step = time.Now()
	alive := []*proc{d.serve}
	for _, w := range d.workers {
		if !w.exited() {
			alive = append(alive, w)
		}
	}
	terminate(t, grace, alive...)
	select {
	case <-d.events.ended:
	case <-time.After(5 * time.Second):
		t.Error("the event stream outlived the serve process")
	}
	t.Logf("SIGTERM: %d processes exited in %s; total %s", len(alive),
		time.Since(step).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// startDeployment creates the tenant, starts serve, waits until it leads
// maintenance (so a killed worker never takes the lease rescue with it),
// starts two workers and subscribes to serve's events.
func startDeployment(t *testing.T) *deployment {
	t.Helper()
	d := &deployment{bin: buildDocket(t), db: newPGDatabase(t)}
	d.env = []string{"DATABASE_URL=" + d.db.url, "DOCKET_DATA_DIR=" + t.TempDir(), "DOCKET_LOG_LEVEL=info"}
	tenantID, key := d.createTenant(t)

	procFlags := []string{"--concurrency", "1", "--lease", "2s", "--shutdown-grace", grace.String()}
	d.serve = startDocket(t, "serve", d.bin, d.env, append([]string{"serve", "--listen", "127.0.0.1:0"}, procFlags...)...)
	d.srv = readBanner(t, d.serve.stdout.String, d.serve.stderr.String)
	out := d.serve.stdout.String()
	if d.srv.key != "" || strings.Contains(out, "tenant:") || !strings.Contains(out, "api_key: (issued at first start") {
		t.Errorf("serve on a database with a tenant made another:\n%s", out)
	}
	d.srv.key = key
	d.db.waitLeader(t, d.serve.pid(), 20*time.Second)
	for i := range 2 {
		w := startDocket(t, fmt.Sprintf("worker %d", i+1), d.bin, d.env, append([]string{"worker"}, procFlags...)...)
		d.workers = append(d.workers, w)
	}
	for _, w := range d.workers {
		w.waitOutput(t, "worker started", 20*time.Second)
	}
	if list := d.docket(t, "tenants", "list"); !strings.Contains(list, tenantID) || strings.Count(list, "\n") != 2 {
		t.Errorf("tenants list, want only acme:\n%s", list)
	}
	d.events = openEvents(t, d.srv)
	return d
}

// createTenant runs `docket tenants create --json` and returns the new
// tenant's id and key.
func (d *deployment) createTenant(t *testing.T) (id, key string) {
	t.Helper()
	out := d.docket(t, "tenants", "create", "--name", "acme", "--plan", "pro", "--concurrency", "3", "--json")
	var got struct {
		Tenant struct {
			ID          string `json:"id"`
			Plan        string `json:"plan"`
			Concurrency int    `json:"concurrency"`
		} `json:"tenant"`
		APIKey string `json:"api_key"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("tenants create --json printed %q: %v", out, err)
	}
	if got.Tenant.ID == "" || got.Tenant.Plan != "pro" || got.Tenant.Concurrency != 3 || !strings.HasPrefix(got.APIKey, "dk_") {
		t.Fatalf("tenants create --json printed %q, want the admin API's {tenant, api_key, key}", out)
	}
	return got.Tenant.ID, got.APIKey
}

// docket runs a short docket command and returns its standard output.
func (d *deployment) docket(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, d.bin, args...)
	cmd.Env = append(cmd.Environ(), d.env...)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("docket %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// worker returns the worker process with pid, or nil.
func (d *deployment) worker(pid int) *proc {
	for _, w := range d.workers {
		if w.pid() == pid {
			return w
		}
	}
	return nil
}

// uploadSpread uploads documents that take a moment each and checks they
// complete, on more than one process, and that serve's event stream shows
// the completion of those the workers ran.
func (d *deployment) uploadSpread(t *testing.T) []string {
	t.Helper()
	ids := make([]string, 6)
	for i := range ids {
		body := append(fmt.Appendf(nil, "Note %d.\n\n", i), bigText(512<<10)...)
		ids[i] = upload(t, d.srv, fmt.Sprintf("note-%d.txt", i), body)
	}
	for _, id := range ids {
		waitJob(t, d.srv, id, "completed", 40*time.Second)
	}
	perPID := map[int]int{}
	var onWorkers []string
	for id, r := range d.db.runs(t, ids) {
		perPID[r.pid]++
		switch {
		case d.worker(r.pid) != nil:
			onWorkers = append(onWorkers, id)
		case r.pid != d.serve.pid():
			t.Errorf("job %s ran on process %d, none of ours", id, r.pid)
		}
	}
	t.Logf("jobs per process: serve %d, workers %d and %d", perPID[d.serve.pid()],
		perPID[d.workers[0].pid()], perPID[d.workers[1].pid()])
	if len(perPID) < 2 {
		t.Errorf("all %d jobs ran on one process: %v", len(ids), perPID)
	}
	if len(onWorkers) == 0 {
		t.Fatalf("no job ran on a worker process: %v", perPID)
	}
	for _, id := range onWorkers {
		d.waitEvent(t, id, "completed", completed)
	}
	return ids
}

// waitEvent polls serve's event stream for an event of job id that match
// accepts.
func (d *deployment) waitEvent(t *testing.T, id, what string, match func(jobEvent) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !d.events.has(id, match) {
		if time.Now().After(deadline) {
			t.Fatalf("serve's event stream shows no %s event of job %s: %+v", what, id, d.events.of(id))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killWorkerMidJob uploads two large documents, kills with SIGKILL a worker
// process in the middle of one, and checks both complete: the killed one in
// a second attempt on another process, after its lease (2s) ran out.
func (d *deployment) killWorkerMidJob(t *testing.T) []string {
	t.Helper()
	ids := []string{
		upload(t, d.srv, "big-a.txt", append([]byte("A.\n\n"), bigText(2<<20)...)),
		upload(t, d.srv, "big-b.txt", append([]byte("B.\n\n"), bigText(2<<20)...)),
	}
	victim, job, at := d.waitRunningOnWorker(t, ids, 30*time.Second)
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	victim.wait(t, 10*time.Second)
	t.Logf("killed %s (pid %d) running job %s (attempt %d) at %d%%", victim.name, victim.pid(), job, at.attempt, at.progress)

	// Two 2 MB documents, one of them run again after the lease: long
	// enough to be caught part way (the progress is polled every 20 ms),
	// where two of 8 MB took 45-66 s of a loaded 2-core run. The bound is
	// that of the larger ones.
	for _, id := range ids {
		waitJob(t, d.srv, id, "completed", 90*time.Second)
	}
	r := d.db.runs(t, []string{job})[job]
	if r.attempt <= at.attempt || r.pid == victim.pid() {
		t.Errorf("the job killed in attempt %d completed in attempt %d on process %d; want a later attempt elsewhere",
			at.attempt, r.attempt, r.pid)
	}
	as := d.db.attempts(t, job)
	if !slices.ContainsFunc(as, func(a attempt) bool { return a.n == at.attempt && a.pid == victim.pid() }) {
		t.Errorf("no record of attempt %d on the killed process %d: %+v", at.attempt, victim.pid(), as)
	}
	t.Logf("attempts of the killed job: %+v; completed by pid %d", as, r.pid)
	// The killed worker's progress reached serve only through PostgreSQL.
	d.waitEvent(t, job, "killed attempt's progress", func(e jobEvent) bool { return e.Attempt == at.attempt && midJob(e) })
	d.waitEvent(t, job, "completed", func(e jobEvent) bool { return completed(e) && e.Attempt > at.attempt })
	return ids
}

// waitRunningOnWorker polls until one of the jobs is part way through on a
// worker process (not serve) and returns that process, the job and its run.
func (d *deployment) waitRunningOnWorker(t *testing.T, ids []string, within time.Duration) (*proc, string, jobRun) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		for id, r := range d.db.runs(t, ids) {
			if w := d.worker(r.pid); w != nil && r.state == "running" && r.progress > 0 && r.progress < 90 {
				return w, id, r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no job part way through on a worker within %s: %+v", within, d.db.runs(t, ids))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkNothingLost checks the tenant has n jobs and n documents, all
// completed.
func (d *deployment) checkNothingLost(t *testing.T, n int) {
	t.Helper()
	var jobs struct {
		Jobs []jobEvent `json:"jobs"`
	}
	getJSON(t, d.srv, "/v1/jobs?limit=100", &jobs)
	var docs struct {
		Documents []struct {
			Status string `json:"status"`
		} `json:"documents"`
	}
	getJSON(t, d.srv, "/v1/documents?limit=100", &docs)
	if len(jobs.Jobs) != n || len(docs.Documents) != n {
		t.Fatalf("%d jobs and %d documents, want %d of each", len(jobs.Jobs), len(docs.Documents), n)
	}
	for i, j := range jobs.Jobs {
		if j.Status != "completed" || docs.Documents[i].Status != "completed" {
			t.Errorf("job %s %s, document %d %s; want completed", j.ID, j.Status, i, docs.Documents[i].Status)
		}
	}
}

// terminate sends SIGTERM to every process at once and checks each exits
// with status 0 within grace.
func terminate(t *testing.T, grace time.Duration, ps ...*proc) {
	t.Helper()
	start := time.Now()
	for _, p := range ps {
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatalf("SIGTERM %s: %v", p.name, err)
		}
	}
	for _, p := range ps {
		p.wait(t, time.Until(start.Add(grace+10*time.Second)))
		took := time.Since(start)
		if p.err != nil {
			t.Errorf("%s after SIGTERM: %v\nstderr:\n%s", p.name, p.err, p.stderr.String())
		}
		if took > grace {
			t.Errorf("%s exited %s after SIGTERM; grace %s", p.name, took.Round(time.Millisecond), grace)
		}
	}
}
