//go:build !linux

package extract

// arena is not used off Linux: instance memory stays in the Go heap.
type arena struct {
	mem []byte
}

func newArena(int) *arena { return nil }

func (a *arena) free() {}
