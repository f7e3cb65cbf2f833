package extract

import (
	"bytes"
	"reflect"

	"github.com/tetratelabs/wazero/api"
)

// An instance's WebAssembly memory would otherwise live in the Go heap, where wazero grows it
// by appending: every growth copies the whole memory into a new, larger array and leaves the old
// one to the collector, which lets the heap reach twice its live size first. A 512 MiB cap so
// cost the process 1.7 GB (issue 10). So each instance's memory is moved, before its first
// call, into an arena: one mapping of the cap's full size made outside the Go heap, whose pages
// cost memory only once PDFium touches them, which never moves, and which is unmapped when the
// instance is gone. The cap then bounds what an instance costs the process.

// moveMemory moves mod's linear memory into a new arena the size of its maximum and returns the
// arena, or nil where that cannot be done (another platform, another wazero layout): the
// memory then stays where wazero put it. mod must not be running.
func moveMemory(mod api.Module) (a *arena) {
	if mod == nil || mod.Memory() == nil {
		return nil
	}
	mem := mod.Memory()
	defer func() {
		if recover() != nil && a != nil {
			a.free()
			a = nil
		}
	}()
	v := reflect.ValueOf(mem)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	s := v.Elem()
	buf, capPages, maxPages, shared := s.FieldByName("Buffer"), s.FieldByName("Cap"), s.FieldByName("Max"), s.FieldByName("Shared")
	if !buf.CanSet() || buf.Type() != reflect.TypeFor[[]byte]() || !capPages.CanSet() ||
		capPages.Kind() != reflect.Uint32 || maxPages.Kind() != reflect.Uint32 ||
		shared.Kind() != reflect.Bool || shared.Bool() {
		return nil
	}
	old, oldCap := buf.Bytes(), capPages.Uint()
	size := int(maxPages.Uint()) << 16
	if len(old)+1<<16 > size {
		return nil
	}
	if a = newArena(size); a == nil {
		return nil
	}
	copyTouched(a.mem, old)
	buf.SetBytes(a.mem[:len(old):size])
	capPages.SetUint(maxPages.Uint())
	// Growing by a page is the one public way to make the compiled code reload the memory's
	// address; the page stays unused.
	if _, ok := mem.Grow(1); !ok {
		buf.SetBytes(old)
		capPages.SetUint(oldCap)
		a.free()
		return nil
	}
	return a
}

// copyTouched copies src to dst, which is zeroed, page by page, skipping pages of src that are
// all zero: those of dst stay untouched and cost no memory. It is not instrumented by the race
// detector (a 17 MiB instance memory took half a second per document under -race); src belongs
// to a module that is not running.
//
//go:norace
func copyTouched(dst, src []byte) {
	for off := 0; off < len(src); off += len(zeroPage) {
		p := src[off:min(off+len(zeroPage), len(src))]
		if !bytes.Equal(p, zeroPage[:len(p)]) {
			copy(dst[off:], p)
		}
	}
}

var zeroPage = make([]byte, 4096)
