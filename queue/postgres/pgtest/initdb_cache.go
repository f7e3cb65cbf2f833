package pgtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// initdb's output is the same for every cluster of one set of binaries, and
// running it costs 1.5–3.5 s on the 2-core box (most of a cluster's start;
// the chaos tier starts a dozen clusters, every test package one). So the
// first cluster of a machine runs initdb into a cache directory shared by
// every test process, and each cluster copies it (`cp -a`, tens of
// milliseconds). The cache is keyed by the binaries and the environment
// initdb runs with, and filled atomically: initdb writes into a directory of
// its own, renamed into place; a process that loses the race uses the
// winner's. Its name does not start with dirPrefix, so sweepStale leaves it.
const initdbCacheDir = "docket-initdb-cache"

// initdbArgs are initdb's arguments but the data directory.
var initdbArgs = []string{"-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"}

// cacheKey names the cache entry of s's binaries and environment: the
// initdb binary's path, size and modification time, initdb's arguments,
// the user it runs as and the extra environment.
func (s *server) cacheKey() (string, error) {
	bin := filepath.Join(s.binDir, "initdb")
	st, err := os.Stat(bin)
	if err != nil {
		return "", fmt.Errorf("pgtest: %w", err)
	}
	h := sha256.New()
	for _, part := range append([]string{bin, strconv.FormatInt(st.Size(), 10), st.ModTime().String(),
		strconv.Itoa(os.Geteuid())}, append(initdbArgs, s.opts.Env...)...) {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// initdbCached fills s's data directory from the cache under root (empty:
// the machine's, in os.TempDir()), running initdb into the cache first when
// its entry is missing.
func (s *server) initdbCached(ctx context.Context, root string) error {
	key, err := s.cacheKey()
	if err != nil {
		return err
	}
	if root == "" {
		root = filepath.Join(os.TempDir(), initdbCacheDir)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	entry := filepath.Join(root, key)
	if _, err := os.Stat(filepath.Join(entry, "data", "PG_VERSION")); err != nil {
		if err := s.fillCache(ctx, root, entry); err != nil {
			return err
		}
	}
	// cp -a keeps modes and owners: the data directory must be the server
	// user's, mode 0700 or 0750.
	out, err := exec.CommandContext(ctx, "cp", "-a", "--", filepath.Join(entry, "data"), s.dataDir()).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: copy the cached initdb: %w\n%s", err, out)
	}
	return nil
}

// fillCache runs initdb into a new directory under root and renames it to
// entry; when another process renamed its own first, it keeps that one.
func (s *server) fillCache(ctx context.Context, root, entry string) error {
	tmp, err := os.MkdirTemp(root, "tmp-")
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer os.RemoveAll(tmp) // empty after a rename; the leftovers of a failure otherwise
	if err := s.chownToRunAs(tmp); err != nil {
		return err
	}
	out, err := s.command(ctx, "initdb", append([]string{"-D", filepath.Join(tmp, "data")}, initdbArgs...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	if err := os.Rename(tmp, entry); err != nil {
		if _, serr := os.Stat(filepath.Join(entry, "data", "PG_VERSION")); serr == nil {
			return nil // another process filled it first
		}
		return fmt.Errorf("pgtest: %w", err)
	}
	return nil
}

// chownToRunAs hands dir to the user the server runs as, when this process
// is root.
func (s *server) chownToRunAs(dir string) error {
	if s.runAs == nil {
		return nil
	}
	uid, _ := strconv.Atoi(s.runAs.Uid)
	gid, _ := strconv.Atoi(s.runAs.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return fmt.Errorf("pgtest: chown %s to %s: %w", dir, s.runAs.Username, err)
	}
	return nil
}
