//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"runtime/debug"
	"syscall"
	"time"
)

// errNoUsage: outside Linux a child's CPU time and memory are not
// watched; the wall-clock deadline and the runtime's soft limit remain.
var errNoUsage = errors.New("sandbox: process usage is read on Linux only")

func usage(int) (time.Duration, int64, error) { return 0, 0, errNoUsage }

func limitMemory(limit int64) error {
	if limit > 0 {
		debug.SetMemoryLimit(limit * 3 / 4)
	}
	return nil
}

func grown() int64 { return 0 }

func childAttr() *syscall.SysProcAttr { return nil }

// spawner starts the pool's children until ctx ends.
func spawner(ctx context.Context, reqs <-chan spawnRequest, _ int) {
	for {
		select {
		case <-ctx.Done():
			return
		case r := <-reqs:
			r.done <- r.cmd.Start()
		}
	}
}
