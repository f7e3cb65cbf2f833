package extract

import "syscall"

// arena is memory mapped outside the Go heap: its pages cost memory once touched.
type arena struct {
	mem []byte
}

// newArena maps size bytes, or returns nil if the mapping fails.
func newArena(size int) *arena {
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
	if err != nil {
		return nil
	}
	return &arena{mem: mem}
}

// free unmaps the arena. Nothing may touch its memory afterwards.
func (a *arena) free() {
	_ = syscall.Munmap(a.mem)
}
