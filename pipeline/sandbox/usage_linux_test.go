package sandbox

import (
	"os/exec"
	"testing"
	"time"
)

// TestUsage_CountsWaitedChildren: a process's CPU time includes that of the children it has
// waited for, as a child's includes its tesseract processes'.
func TestUsage_CountsWaitedChildren(t *testing.T) {
	t.Parallel()
	// The outer shell spends no CPU time of its own: its child burns some, then it sleeps.
	cmd := exec.Command("/bin/sh", "-c",
		`/bin/sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'; exec /bin/sleep 60`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		cpu, _, err := usage(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		if cpu >= 100*time.Millisecond {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CPU time %s after its child's loop: the child's time is not counted", cpu)
		}
	}
}
