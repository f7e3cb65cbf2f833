package chaos

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// buildDocket builds cmd/docket (without -race, as the worker) into the
// test's temporary directory and returns the binary's path.
func buildDocket(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command to build docket: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "docket")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, goBin, "build", "-o", bin, "../cmd/docket").CombinedOutput(); err != nil {
		t.Fatalf("build docket: %v\n%s", err, out)
	}
	return bin
}

// docketProc is a `docket serve` or `docket worker` process the test
// started: its standard output kept in memory, its log (JSON, one object a
// line) in a file.
type docketProc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	stdout  lockedBuffer
	done    chan struct{} // closed once reaped
}

// lockedBuffer is a bytes.Buffer safe for one writer and many readers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startDocketProc runs bin with args and env (over this process's) until
// the test ends (SIGKILL then, if it still runs).
func startDocketProc(t *testing.T, name, bin string, env []string, args ...string) *docketProc {
	t.Helper()
	p := &docketProc{name: name, logPath: filepath.Join(t.TempDir(), name+".log"), done: make(chan struct{})}
	f, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, f
	p.cmd.WaitDelay = 5 * time.Second
	if err := p.cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		_ = p.cmd.Wait() // the status is in ProcessState
		f.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		if !p.exited() {
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
		}
		<-p.done
	})
	return p
}

func (p *docketProc) pid() int { return p.cmd.Process.Pid }

func (p *docketProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *docketProc) log() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	return string(b)
}

func (p *docketProc) logTail(n int) string {
	lines := strings.Split(strings.TrimRight(p.log(), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// waitLog waits until the process's log or standard output holds s.
func (p *docketProc) waitLog(t *testing.T, s string, within time.Duration) {
	t.Helper()
	waitFor(t, within, fmt.Sprintf("%s to print %q", p.name, s), func() (bool, string) {
		if p.exited() {
			t.Fatalf("%s exited (%s) before printing %q:\n%s", p.name, p.cmd.ProcessState, s, p.logTail(20))
		}
		return strings.Contains(p.log(), s) || strings.Contains(p.stdout.String(), s), p.logTail(3)
	})
}

// attemptEnd is one "attempt ended" line of a process's log: one per
// execution of a handler (ops.LogAttempts), written once its outcome is
// settled; outcome completed means the completing transaction's commit
// returned to the worker.
type attemptEnd struct {
	EndedAt   time.Time `json:"time"`
	JobID     int64     `json:"job_id"`
	Attempt   int       `json:"attempt"`
	Outcome   string    `json:"outcome"`
	StartedAt time.Time `json:"started_at"`
	Error     string    `json:"error"`
	pid       int
}

func (a attemptEnd) String() string {
	return fmt.Sprintf("{pid %d attempt %d %q started %s ended %s %s}", a.pid, a.Attempt, a.Outcome,
		a.StartedAt.Format("15:04:05.000"), a.EndedAt.Format("15:04:05.000"), a.Error)
}

// attempts reads the process's "attempt ended" lines.
func (p *docketProc) attempts(t *testing.T) []attemptEnd {
	t.Helper()
	var out []attemptEnd
	sc := bufio.NewScanner(strings.NewReader(p.log()))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`"msg":"attempt ended"`)) {
			continue
		}
		var a attemptEnd
		if err := json.Unmarshal(line, &a); err != nil {
			t.Fatalf("%s: attempt line %s: %v", p.name, line, err)
		}
		a.pid = p.pid()
		out = append(out, a)
	}
	return out
}

// dashboardLine is serve's line with its address.
var dashboardLine = regexp.MustCompile(`(?m)^dashboard: (http://\S+)/$`)

// uploader uploads documents to serve with a tenant's key.
type uploader struct {
	base, key string
	client    *http.Client
}

// uploadAck is an upload serve answered 202: its document and job.
type uploadAck struct {
	DocumentID string
	JobID      int64
}

// upload posts one small text document; err is any answer but 202.
func (u *uploader) upload(ctx context.Context, name string) (uploadAck, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		return uploadAck{}, err
	}
	fmt.Fprintf(fw, "Document %s.\n\nA failover test writes this text; its chunks and embeddings are small.\n", name)
	if err := mw.Close(); err != nil {
		return uploadAck{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.base+"/v1/documents", &body)
	if err != nil {
		return uploadAck{}, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+u.key)
	res, err := u.client.Do(req)
	if err != nil {
		return uploadAck{}, err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusAccepted {
		return uploadAck{}, fmt.Errorf("upload: %d %s", res.StatusCode, bytes.TrimSpace(raw))
	}
	var out struct {
		Document struct {
			ID string `json:"id"`
		} `json:"document"`
		Job struct {
			ID string `json:"id"`
		} `json:"job"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return uploadAck{}, fmt.Errorf("upload answer %s: %w", raw, err)
	}
	id, err := strconv.ParseInt(out.Job.ID, 10, 64)
	if err != nil || out.Document.ID == "" {
		return uploadAck{}, fmt.Errorf("upload answer %s: no document or job id", raw)
	}
	return uploadAck{DocumentID: out.Document.ID, JobID: id}, nil
}
