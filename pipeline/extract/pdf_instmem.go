package extract

import (
	"context"
	"errors"

	"github.com/tetratelabs/wazero/api"
)

// errWasmMemory is an address outside an instance's memory: the instance is not to be trusted.
var errWasmMemory = errors.New("pdf: engine memory out of range")

// wasmMem allocates in a PDFium instance's own memory, through its exported malloc and free.
type wasmMem struct {
	mod api.Module
	ctx context.Context
}

func (m wasmMem) malloc(n uint64) (uint64, error) {
	res, err := m.mod.ExportedFunction("malloc").Call(m.ctx, n)
	if err != nil {
		return 0, err
	}
	if res[0] == 0 {
		return 0, errWasmMemory
	}
	return res[0], nil
}

func (m wasmMem) free(p uint64) {
	_, _ = m.mod.ExportedFunction("free").Call(m.ctx, p)
}

// cString copies s, NUL-terminated, into the instance's memory.
func (m wasmMem) cString(s string) (uint64, error) {
	p, err := m.malloc(uint64(len(s) + 1))
	if err != nil {
		return 0, err
	}
	if !m.mod.Memory().Write(uint32(p), append([]byte(s), 0)) {
		m.free(p)
		return 0, errWasmMemory
	}
	return p, nil
}
