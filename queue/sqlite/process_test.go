package sqlite_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/sqlite"
)

// The tests here start this test binary again as a second process, which
// runs TestHelperProcess in the mode the environment names.
const (
	helperMode = "DOCKET_SQLITE_HELPER"
	helperPath = "DOCKET_SQLITE_HELPER_DB"
)

func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperMode)
	if mode == "" {
		return // only a helper process, started by the tests below
	}
	path := os.Getenv(helperPath)
	switch mode {
	case "open":
		d, err := sqlite.Open(context.Background(), path)
		if err != nil {
			fmt.Printf("refused: locked=%v: %v\n", errors.Is(err, sqlite.ErrLocked), err)
			os.Exit(0)
		}
		fmt.Println("opened")
		_ = d.Close()
	case "enqueue":
		helperEnqueue(path) // never returns: the parent kills it
	}
	os.Exit(0)
}

// helperEnqueue enqueues jobs one commit at a time, reports each id once
// its commit returned, and keeps going until it is killed.
func helperEnqueue(path string) {
	ctx := context.Background()
	d, err := sqlite.Open(ctx, path)
	if err == nil {
		err = d.Migrate(ctx)
	}
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	c := queue.NewClient(d, queue.ClientConfig{})
	for i := 0; ; i++ {
		res, err := c.Enqueue(ctx, &queue.EnqueueParams{Kind: "k", TenantID: fmt.Sprintf("t%d", i%3)})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("committed", res.Job.ID)
	}
}

func helper(t *testing.T, mode, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperMode+"="+mode, helperPath+"="+path)
	return cmd
}

func skipWithoutFlock(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("the second-process check needs flock")
	}
}

// A second process cannot open a database that one process serves; once
// the first closes it, it can.
func TestOpen_SecondProcessRefused(t *testing.T) {
	t.Parallel()
	skipWithoutFlock(t)
	path := filepath.Join(t.TempDir(), "docket.db")
	d := openAt(t, path)
	out, err := helper(t, "open", path).Output()
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	msg := string(out)
	for _, want := range []string{"refused: locked=true", "another process", "process " + strconv.Itoa(os.Getpid()), "PostgreSQL"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("second process said %q, want it to contain %q", msg, want)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if out, err := helper(t, "open", path).Output(); err != nil || strings.TrimSpace(string(out)) != "opened" {
		t.Fatalf("after Close the second process said %q (%v), want opened", out, err)
	}
}

// A second Driver in the same process is refused too: it would be a
// second writer.
func TestOpen_SecondDriverRefused(t *testing.T) {
	t.Parallel()
	skipWithoutFlock(t)
	path := filepath.Join(t.TempDir(), "docket.db")
	d := openAt(t, path)
	if d2, err := sqlite.Open(context.Background(), path); !errors.Is(err, sqlite.ErrLocked) {
		if d2 != nil {
			_ = d2.Close()
		}
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	openAt(t, path) // the lock went with Close
}

// Every enqueue whose commit returned survives the process being killed
// (SIGKILL: no Close, no checkpoint), and the dead process leaves no lock.
func TestDriver_SurvivesKill(t *testing.T) {
	t.Parallel()
	skipWithoutFlock(t)
	path := filepath.Join(t.TempDir(), "docket.db")
	cmd := helper(t, "enqueue", path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var committed []int64
	lines := bufio.NewScanner(stdout)
	for len(committed) < 200 && lines.Scan() {
		id, ok := strings.CutPrefix(lines.Text(), "committed ")
		if !ok {
			t.Fatalf("helper: %s", lines.Text())
		}
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		committed = append(committed, n)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if len(committed) < 200 {
		t.Fatalf("helper reported %d commits before it stopped", len(committed))
	}
	d := openAt(t, path) // also proves the lock died with the process
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, id := range committed {
		if _, err := d.Executor().JobGet(ctx, id); err != nil {
			t.Fatalf("job %d, committed before the kill: %v", id, err)
		}
	}
}
