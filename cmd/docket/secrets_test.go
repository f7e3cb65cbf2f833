package main

import (
	"context"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// With no admin key given, serve generates one into <data-dir>/admin.key
// (0600) that the admin API accepts, and prints it once; the SQLite file, blob directories and
// blob files are private to the owner whatever the data dir's mode.
func TestServe_PrivateFiles(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dataDir, 0o777); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(dataDir, 0o777) // whatever the umask
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0"},
			env(map[string]string{"DOCKET_DATA_DIR": dataDir}), &stdout, &stderr)
	}()
	srv := readBanner(t, stdout.String, stderr.String)
	id := upload(t, srv, "note.txt", []byte("a private note"))
	waitJob(t, srv, id, "completed", 60*time.Second)

	keyFile := filepath.Join(dataDir, "admin.key")
	key, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatalf("no generated admin key: %v\nstdout:\n%s", err, stdout.String())
	}
	if n := strings.Count(stdout.String()+stderr.String(), strings.TrimSpace(string(key))); n != 1 {
		t.Errorf("the generated admin key was printed %d times, want once (the admin_key line)", n)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.base+"/v1/admin/tenants", nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(key)))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("admin API with the generated key: %d", res.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}

	want := map[string]fs.FileMode{keyFile: 0o600, filepath.Join(dataDir, "docket.db"): 0o600}
	blobs := 0
	_ = filepath.WalkDir(filepath.Join(dataDir, "blobs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			want[path] = 0o700
		} else {
			want[path] = 0o600
			blobs++
		}
		return nil
	})
	if blobs == 0 {
		t.Error("no blob file")
	}
	for path, mode := range want {
		fi, err := os.Stat(path)
		if err != nil {
			t.Error(err)
			continue
		}
		if got := fi.Mode().Perm(); got != mode {
			t.Errorf("%s: mode %o, want %o", path, got, mode)
		}
	}
}
