package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/docketq/docket/internal/race"
)

// clockTick is the unit of /proc's CPU times (USER_HZ, 100 on every Linux
// architecture Go supports).
const clockTick = 10 * time.Millisecond

// usage returns the CPU time (user and system) and the resident memory of
// process pid. The CPU time includes that of the children pid has waited
// for: the tesseract processes a child runs to read a document's scanned
// pages (extract.OCRConfig) count against the document's CPU limit as each
// one ends.
func usage(pid int) (cpu time.Duration, rss int64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	// The command name, in parentheses, may hold anything: fields start
	// after its last ')'. Counted from there: 1 state ... 12 utime,
	// 13 stime, 14 cutime, 15 cstime ... 22 rss (pages).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 22 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	var n [5]int64
	for k, idx := range [5]int{11, 12, 13, 14, 21} {
		if n[k], err = strconv.ParseInt(string(f[idx]), 10, 64); err != nil {
			return 0, 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
	}
	return time.Duration(n[0]+n[1]+n[2]+n[3]) * clockTick, n[4] * int64(os.Getpagesize()), nil
}

// startVM is what this child had mapped when it capped its memory.
var startVM int64

// addressSlack is address space a child may map beyond its memory limit.
// The Go runtime maps its heap 64 MiB at a time, so a heap well inside the
// limit could find its next mapping refused: a document that needs 150 MiB
// passed or failed by chance under a 224 MiB cap. Resident memory, which
// the parent watches, is still held to the limit itself.
const addressSlack = 128 << 20

// limitMemory caps this process's address space at what it has mapped now
// plus limit and addressSlack, and sets the Go runtime's soft limit below
// the limit, so that the collector works hard before an allocation fails.
// Under the race detector,
// whose shadow memory takes terabytes of address space, only the parent's
// watch on resident memory applies.
func limitMemory(limit int64) error {
	if limit <= 0 {
		return nil
	}
	debug.SetMemoryLimit(limit * 3 / 4)
	mapped, err := vmSize()
	if err != nil {
		return err
	}
	startVM = mapped
	if race.Enabled {
		return nil
	}
	max := uint64(mapped + limit + addressSlack)
	return syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: max, Max: max})
}

// grown returns how far this child's address space has grown since it
// capped it. What a document mapped stays mapped (the PDF engine's memory
// never shrinks, nor do the Go runtime's reservations), so it is what the
// next document may no longer use.
func grown() int64 {
	if startVM == 0 {
		return 0
	}
	now, err := vmSize()
	if err != nil {
		return 0
	}
	return now - startVM
}

// vmSize returns the address space this process has mapped, in bytes.
func vmSize() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmSize:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte("kB")))), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/self/status: VmSize: %w", err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("/proc/self/status: no VmSize")
}

// childAttr kills the child when its parent dies.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// spawner starts the pool's children, from a thread of its own until ctx
// ends. Linux keeps a nice value per thread and a new process inherits its
// creator thread's: the spawner's thread is lowered to nice, so the
// server's other threads keep their priority. A child's Pdeathsig also
// follows the thread that started it: it lives as long as the pool.
func spawner(ctx context.Context, reqs <-chan spawnRequest, nice int) {
	runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
	err := syscall.Setpriority(syscall.PRIO_PROCESS, 0, nice)
	if err != nil {
		err = fmt.Errorf("lower the priority: %w", err)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case r := <-reqs:
			if err != nil {
				r.done <- err
				continue
			}
			r.done <- r.cmd.Start()
		}
	}
}
