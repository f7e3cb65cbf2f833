package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// proc is a docket process a test started.
type proc struct {
	name   string
	cmd    *exec.Cmd
	stdout *syncBuffer
	stderr *syncBuffer
	done   chan struct{} // closed when the process has exited
	err    error         // Wait's result, once done is closed
}

// startDocket runs the docket binary with args and env (added to this
// process's environment) until the test ends.
func startDocket(t *testing.T, name, bin string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has exited.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits up to within for the process to exit and returns how long it
// took; at the deadline it kills the process and fails the test.
func (p *proc) wait(t *testing.T, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case <-p.done:
		return time.Since(start)
	case <-timer.C:
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("%s (pid %d) still running after %s\nstderr:\n%s", p.name, p.pid(), within, p.stderr.String())
		return 0
	}
}

// waitOutput polls the process's stderr (or stdout) until it contains s.
func (p *proc) waitOutput(t *testing.T, s string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(p.stderr.String(), s) && !strings.Contains(p.stdout.String(), s) {
		if p.exited() {
			t.Fatalf("%s exited (%v) before printing %q\nstderr:\n%s", p.name, p.err, s, p.stderr.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s printed no %q within %s\nstderr:\n%s", p.name, s, within, p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
