package pgtest

import (
	"os"
	"os/user"
	"path/filepath"
	"sync"
	"testing"
)

// TestInitdbCache_Race: processes starting their first cluster at once
// each run initdb into a fresh cache; one entry wins, and every one of them
// gets a complete data directory of the server user's.
func TestInitdbCache_Race(t *testing.T) {
	binDir, err := findBinDir()
	if err != nil {
		t.Skip(err)
	}
	root, err := os.MkdirTemp(os.TempDir(), "initdb-cache-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil { // the server user must reach it
		t.Fatal(err)
	}
	var runAs *user.User
	if os.Geteuid() == 0 {
		if runAs, err = user.Lookup("postgres"); err != nil {
			t.Skip("root without a postgres user")
		}
	}
	const n = 3
	servers := make([]*server, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range servers {
		s := &server{opts: Options{}.withDefaults(), binDir: binDir, runAs: runAs}
		if err := s.makeDir(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.destroy() })
		servers[i] = s
		wg.Go(func() { errs[i] = s.initdbCached(t.Context(), root) })
	}
	wg.Wait()
	for i, s := range servers {
		if errs[i] != nil {
			t.Fatalf("cluster %d: %v", i, errs[i])
		}
		st, err := os.Stat(s.dataDir())
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm()&0o077&^0o050 != 0 {
			t.Errorf("cluster %d: data directory mode %v, want 0700 or 0750", i, st.Mode().Perm())
		}
		if _, err := os.Stat(filepath.Join(s.dataDir(), "PG_VERSION")); err != nil {
			t.Errorf("cluster %d: %v", i, err)
		}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		names := make([]string, len(entries))
		for i, e := range entries {
			names[i] = e.Name()
		}
		t.Errorf("cache holds %v, want one entry (no temporary directory left)", names)
	}
}
