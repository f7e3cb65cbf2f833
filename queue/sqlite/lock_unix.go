//go:build unix

package sqlite

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// lockFile takes an exclusive flock on dbPath+".lock" and writes this
// process's id into it. The kernel releases the lock when the process dies,
// so a crash never leaves a stale lock behind.
func lockFile(dbPath string) (*os.File, error) {
	path := dbPath + ".lock"
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open lock file: %w", err)
	}
	err = flockOwn(f)
	if err != nil {
		holder := readHolder(f)
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, lockedError(dbPath, holder)
		}
		return nil, fmt.Errorf("sqlite: lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// flockOwn takes the exclusive flock on f. When this very process is the
// holder, the lock is most likely one a Driver of this process released an
// instant ago and that a child process being started still holds a copy
// of, until it executes its program: it is tried again for up to
// ownRetry before it counts as held.
func flockOwn(f *os.File) error {
	deadline := time.Now().Add(ownRetry)
	for {
		syscall.ForkLock.RLock() // no child is between its start and its program
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		syscall.ForkLock.RUnlock()
		if !errors.Is(err, syscall.EWOULDBLOCK) || readHolder(f) != strconv.Itoa(os.Getpid()) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ownRetry is how long flockOwn tries again a lock this process holds.
const ownRetry = time.Second

func readHolder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	return string(bytes.TrimSpace(b[:n]))
}

// unlockFile releases the lock. The file stays: removing it would race
// with a process that just opened it.
func unlockFile(f *os.File) error {
	return f.Close() // closing the last descriptor releases the flock
}
