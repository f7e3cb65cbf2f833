package extract

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// ocrProcAttr kills a tesseract process when the thread that started it ends, so that it never
// outlives the process (a sandbox child) that ran the parse. The Go runtime ends a thread with
// its process, or when a goroutine locked to it exits: that can only end a page's tesseract
// early, which fails the page.
func ocrProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// limitOCRProcess sets the limits of cfg on the tesseract process pid, which has not been sent
// its input yet: its address space (PageMemory), its CPU time (PageCPU: SIGXCPU at the limit,
// SIGKILL a second later), no core dump and no file written. A limit it inherited lower (a
// sandbox child's own address space) stays.
func limitOCRProcess(pid int, cfg *OCRConfig) error {
	cpu := uint64((cfg.PageCPU + 999_999_999) / 1_000_000_000)
	for _, l := range []struct {
		resource int
		cur, max uint64
	}{
		{unix.RLIMIT_AS, uint64(cfg.PageMemory), uint64(cfg.PageMemory)},
		{unix.RLIMIT_CPU, cpu, cpu + 1},
		{unix.RLIMIT_CORE, 0, 0},
		{unix.RLIMIT_FSIZE, 0, 0},
	} {
		var old unix.Rlimit
		if err := unix.Prlimit(pid, l.resource, nil, &old); err != nil {
			return err
		}
		lim := unix.Rlimit{Cur: min(l.cur, old.Max), Max: min(l.max, old.Max)}
		if err := unix.Prlimit(pid, l.resource, &lim, nil); err != nil {
			return err
		}
	}
	return nil
}
